// Keeping keyboard focus inside a modal: Tab and Shift+Tab cycle through its controls, Escape
// closes it, and focus goes back to whatever had it before (the button that opened it).

import { type RefObject, useEffect, useRef } from "react";

const FOCUSABLE = [
  "a[href]",
  "button:not([disabled])",
  "input:not([disabled]):not([type=hidden])",
  "select:not([disabled])",
  "textarea:not([disabled])",
  "[tabindex]:not([tabindex='-1'])",
].join(",");

export function focusableWithin(container: HTMLElement): HTMLElement[] {
  return [...container.querySelectorAll<HTMLElement>(FOCUSABLE)].filter(
    (element) => !element.hasAttribute("inert") && element.getAttribute("aria-hidden") !== "true",
  );
}

/** Where Tab (or Shift+Tab) should go from `current`, wrapping around the ends. */
export function wrapFocus(
  elements: HTMLElement[],
  current: Element | null,
  backwards: boolean,
): HTMLElement | null {
  if (elements.length === 0) return null;
  const index = current ? elements.indexOf(current as HTMLElement) : -1;
  if (backwards) return index <= 0 ? elements[elements.length - 1]! : elements[index - 1]!;
  return index === -1 || index === elements.length - 1 ? elements[0]! : elements[index + 1]!;
}

/**
 * Trap focus in `container` while mounted. Focus returns to `returnTo` if given (Safari does
 * not focus a clicked button, so the opener is not always the active element), else to the
 * element that had focus when the trap started.
 */
export function useFocusTrap(
  container: RefObject<HTMLElement | null>,
  onEscape: () => void,
  returnTo?: RefObject<HTMLElement | null>,
): void {
  const escapeRef = useRef(onEscape);
  escapeRef.current = onEscape;

  useEffect(() => {
    const root = container.current;
    if (!root) return;
    const active = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const opener = returnTo?.current ?? active;
    const initial =
      root.querySelector<HTMLElement>("[data-autofocus]") ?? focusableWithin(root)[0] ?? root;
    initial.focus();

    function onKeyDown(event: KeyboardEvent) {
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        escapeRef.current();
        return;
      }
      if (event.key !== "Tab" || !root) return;
      event.preventDefault();
      wrapFocus(focusableWithin(root), document.activeElement, event.shiftKey)?.focus();
    }
    root.addEventListener("keydown", onKeyDown);
    return () => {
      root.removeEventListener("keydown", onKeyDown);
      if (opener?.isConnected) opener.focus();
    };
  }, [container, returnTo]);
}
