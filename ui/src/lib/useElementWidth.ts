import { type RefObject, useEffect, useState } from "react";

/** How long a width must hold before views lay out again (dragging a window edge). */
const SETTLE_MS = 120;

/** The element's content width, kept current with a ResizeObserver, updates settled. */
export function useElementWidth(ref: RefObject<HTMLElement | null>, fallback = 900): number {
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    let timer: number | undefined;
    const measure = () => {
      const measured = Math.floor(element.getBoundingClientRect().width);
      if (measured > 0) setWidth(measured);
    };
    measure();
    if (typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => {
      window.clearTimeout(timer);
      timer = window.setTimeout(measure, SETTLE_MS);
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      window.clearTimeout(timer);
    };
  }, [ref]);
  return width;
}
