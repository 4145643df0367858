// A few lines of React rendering for tests, instead of a testing library dependency.

import type { ReactNode } from "react";
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";

const mounted: { root: Root; container: HTMLElement }[] = [];

export type Rendered = {
  container: HTMLElement;
  rerender: (ui: ReactNode) => Promise<void>;
  unmount: () => Promise<void>;
};

export async function render(ui: ReactNode): Promise<Rendered> {
  const container = document.createElement("div");
  document.body.append(container);
  const root = createRoot(container);
  mounted.push({ root, container });
  await act(async () => root.render(ui));
  return {
    container,
    rerender: async (next) => act(async () => root.render(next)),
    unmount: async () => {
      await act(async () => root.unmount());
      container.remove();
    },
  };
}

export async function cleanup(): Promise<void> {
  for (const { root, container } of mounted.splice(0)) {
    await act(async () => root.unmount());
    container.remove();
  }
}

/** Run `work` (a click, a key press) inside act and let effects and promises settle. */
export async function interact(work: () => void | Promise<void>): Promise<void> {
  await act(async () => {
    await work();
  });
}

export function click(element: Element | null): Promise<void> {
  if (!element) throw new Error("nothing to click");
  return interact(() => {
    (element as HTMLElement).dispatchEvent(
      new MouseEvent("click", { bubbles: true, cancelable: true, button: 0 }),
    );
  });
}

export function press(
  element: Element | null,
  key: string,
  init: KeyboardEventInit = {},
): Promise<void> {
  if (!element) throw new Error("nothing to press a key on");
  return interact(() => {
    element.dispatchEvent(
      new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...init }),
    );
  });
}

/** Set an input's value the way React notices, then fire input. */
export function type(element: Element | null, value: string): Promise<void> {
  if (!(element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement)) {
    throw new Error("not a text field");
  }
  return interact(() => {
    const prototype = Object.getPrototypeOf(element) as object;
    const setter = Object.getOwnPropertyDescriptor(prototype, "value")?.set;
    setter?.call(element, value);
    element.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

export function byText(container: ParentNode, selector: string, text: string): HTMLElement | null {
  return (
    [...container.querySelectorAll<HTMLElement>(selector)].find((element) =>
      element.textContent?.includes(text),
    ) ?? null
  );
}

/** A JSON Response like the server's. */
export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}
