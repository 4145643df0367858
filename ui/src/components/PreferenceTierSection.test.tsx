import { describe, expect, it, vi } from "vitest";
import { tierSections } from "../lib/preferences";
import { memory, preference } from "../test/fixtures";
import { byText, click, render } from "../test/render";
import { PreferenceTierSection } from "./PreferenceTierSection";

const older = preference({
  memory: memory({ id: 53, content: "Rate limits are per IP." }),
  superseded_by: 54,
});
const newer = preference({ memory: memory({ id: 54, content: "Rate limits are per API key." }) });
const learned = preference({
  memory: memory({ id: 61, content: "Runs pnpm lint before commits." }),
  tier: "signals",
  confidence: 0.415,
  confidence_percent: 42,
  evidence_sessions: 2,
});
const tiers = { explicit: [older, newer], signals: [learned], inferred: [] };
const [explicit, signals, inferred] = tierSections(tiers);

function renderTier(
  section = explicit!,
  handlers = { onLock: vi.fn(), onDismiss: vi.fn(), onOpen: vi.fn() },
) {
  return render(
    <PreferenceTierSection section={section} tiers={tiers} busy={false} {...handlers} />,
  );
}

describe("PreferenceTierSection", () => {
  it("shows each preference with its confidence bar and the server's percent", async () => {
    const { container } = await renderTier(signals);
    const meter = container.querySelector('[role="meter"]')!;
    expect(meter.getAttribute("aria-valuenow")).toBe("0.415");
    expect(container.querySelector(".meter-value")?.textContent).toBe("42%");
    expect(container.textContent).toContain("seen in 2 sessions");
    expect(container.querySelector("h2")?.textContent).toContain("Signals");
  });

  it("dims a superseded preference and says what replaced it", async () => {
    const { container } = await renderTier();
    const items = [...container.querySelectorAll("li.preference")];
    expect(items.map((item) => item.classList.contains("is-superseded"))).toEqual([false, true]);
    expect(items[1]!.textContent).toContain("Replaced by #54: “Rate limits are per API key.”");
  });

  it("offers Lock only outside the explicit tier, and calls back", async () => {
    const handlers = { onLock: vi.fn(), onDismiss: vi.fn(), onOpen: vi.fn() };
    const explicitView = await renderTier(explicit, handlers);
    expect(byText(explicitView.container, "button", "Lock")).toBeNull();
    const { container } = await renderTier(signals, handlers);
    await click(byText(container, "button", "Lock"));
    expect(handlers.onLock).toHaveBeenCalledWith(learned);
  });

  it("asks before dismissing", async () => {
    const handlers = { onLock: vi.fn(), onDismiss: vi.fn(), onOpen: vi.fn() };
    const { container } = await renderTier(signals, handlers);
    await click(byText(container, "button", "Dismiss"));
    expect(handlers.onDismiss).not.toHaveBeenCalled();
    expect(container.textContent).toContain("Dismiss this preference?");
    const confirm = [...container.querySelectorAll("button")].find(
      (b) => b.textContent === "Dismiss",
    );
    await click(confirm!);
    expect(handlers.onDismiss).toHaveBeenCalledWith(learned);
  });

  it("says when a tier is empty", async () => {
    const { container } = await renderTier(inferred);
    expect(container.textContent).toContain("None yet.");
  });
});
