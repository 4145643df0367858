import { useRef, useState } from "react";
import { describe, expect, it, vi } from "vitest";
import { memory } from "../test/fixtures";
import { click, interact, press, render } from "../test/render";
import { ReaderOverlay } from "./ReaderOverlay";

const HOSTILE = [
  "# Notes",
  "",
  "Use **pnpm**. See [docs](https://pnpm.io).",
  "",
  "<img src=x onerror=alert(1)>",
  "<script>window.__pwned = true</script>",
].join("\n");

function Harness() {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  return (
    <>
      <button ref={button} type="button" onClick={() => setOpen(true)}>
        Read
      </button>
      {open && (
        <ReaderOverlay
          memory={memory({ content: HOSTILE })}
          onClose={() => setOpen(false)}
          returnFocusTo={button}
        />
      )}
    </>
  );
}

describe("ReaderOverlay", () => {
  it("renders Markdown and leaves HTML from the content inert", async () => {
    const { container } = await render(
      <ReaderOverlay memory={memory({ content: HOSTILE })} onClose={() => {}} />,
    );
    const body = container.querySelector(".reader-body")!;
    expect(body.querySelector("h1")?.textContent).toBe("Notes");
    expect(body.querySelector("strong")?.textContent).toBe("pnpm");
    expect(body.querySelector("a")?.getAttribute("rel")).toBe("noopener noreferrer");
    expect(body.querySelector("img, script")).toBeNull();
    expect(body.textContent).toContain("<script>window.__pwned = true</script>");
    expect((window as { __pwned?: boolean }).__pwned).toBeUndefined();
  });

  it("is a modal dialog that closes on Escape", async () => {
    const onClose = vi.fn();
    const { container } = await render(<ReaderOverlay memory={memory()} onClose={onClose} />);
    const dialog = container.querySelector('[role="dialog"]')!;
    expect(dialog.getAttribute("aria-modal")).toBe("true");
    await press(document.activeElement, "Escape");
    expect(onClose).toHaveBeenCalledOnce();
  });

  it("keeps Tab inside and gives focus back to the button that opened it", async () => {
    const { container } = await render(<Harness />);
    const opener = container.querySelector("button")!;
    opener.focus();
    await click(opener);
    const dialog = container.querySelector('[role="dialog"]')!;
    const close = dialog.querySelector("button")!;
    expect(document.activeElement).toBe(close);

    const focusables = [...dialog.querySelectorAll<HTMLElement>("button, a[href], [tabindex='0']")];
    const last = focusables[focusables.length - 1]!;
    last.focus();
    await press(last, "Tab");
    expect(document.activeElement).toBe(close);
    await press(close, "Tab", { shiftKey: true });
    expect(document.activeElement).toBe(last);

    await press(document.activeElement, "Escape");
    expect(container.querySelector('[role="dialog"]')).toBeNull();
    await interact(() => {});
    expect(document.activeElement).toBe(opener);
  });
});
