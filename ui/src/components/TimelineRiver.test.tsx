import { describe, expect, it, vi } from "vitest";
import { point } from "../test/fixtures";
import { click, press, render } from "../test/render";
import { layoutTimeline } from "../lib/timeline";
import { TimelineRiver } from "./TimelineRiver";

const NOW = Date.parse("2026-04-30T12:00:00Z");
const layout = layoutTimeline(
  {
    total: 3,
    truncated: false,
    points: [
      point({ id: 11, created_at: "2026-04-14T09:00:00Z", title: "pagination", kind: "raw" }),
      point({
        id: 12,
        created_at: "2026-04-15T09:00:00Z",
        title: "pool <exhaustion>",
        kind: "distilled",
        project: "acme.web_ui",
      }),
      point({ id: 13, created_at: "2026-04-16T09:00:00Z", title: "rate limit", kind: "weird" }),
    ],
    days: [
      { day: "2026-04-14", project: "acme-api", count: 1 },
      { day: "2026-04-16", project: "acme-api", count: 1 },
      { day: "2026-04-15", project: "acme.web_ui", count: 1 },
    ],
  },
  { width: 700, range: "30d", now: NOW },
);

describe("TimelineRiver", () => {
  it("draws a dot per memory, coloured by kind, with a hover title", async () => {
    const { container } = await render(
      <TimelineRiver layout={layout} selectedId={null} onSelect={() => {}} />,
    );
    const dots = [...container.querySelectorAll("circle.dot")];
    expect(dots.map((dot) => dot.getAttribute("data-id"))).toEqual(["11", "12", "13"]);
    expect(dots[1]!.classList.contains("kind-distilled")).toBe(true);
    expect(dots[2]!.classList.contains("kind-other")).toBe(true);
    expect(dots[1]!.querySelector("title")?.textContent).toContain(
      "pool <exhaustion> — acme.web_ui, distilled",
    );
    expect(container.querySelectorAll("path.river-path")).toHaveLength(2);
    expect(container.textContent).toContain("acme-api · 2");
  });

  it("is one tab stop; arrows move focus; Enter and Space select", async () => {
    const onSelect = vi.fn();
    const { container } = await render(
      <TimelineRiver layout={layout} selectedId={null} onSelect={onSelect} />,
    );
    const dots = [...container.querySelectorAll<SVGElement>("circle.dot")];
    expect(dots.map((dot) => dot.getAttribute("tabindex"))).toEqual(["-1", "-1", "0"]);

    dots[2]!.focus();
    await press(dots[2]!, "ArrowLeft");
    expect(document.activeElement).toBe(dots[1]);
    expect(dots[1]!.getAttribute("tabindex")).toBe("0");
    await press(dots[1]!, "Home");
    expect(document.activeElement).toBe(dots[0]);

    await press(dots[0]!, "Enter");
    expect(onSelect).toHaveBeenLastCalledWith(11);
    await press(dots[0]!, " ");
    expect(onSelect).toHaveBeenCalledTimes(2);
  });

  it("selects on click and marks the selected dot", async () => {
    const onSelect = vi.fn();
    const { container, rerender } = await render(
      <TimelineRiver layout={layout} selectedId={null} onSelect={onSelect} />,
    );
    await click(container.querySelector('circle[data-id="12"]'));
    expect(onSelect).toHaveBeenCalledWith(12);
    await rerender(<TimelineRiver layout={layout} selectedId={12} onSelect={onSelect} />);
    const selected = container.querySelector('circle[data-id="12"]')!;
    expect(selected.classList.contains("is-selected")).toBe(true);
    expect(selected.getAttribute("aria-pressed")).toBe("true");
  });
});
