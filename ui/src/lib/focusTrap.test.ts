import { describe, expect, it } from "vitest";
import { focusableWithin, wrapFocus } from "./focusTrap";

describe("focus trap helpers", () => {
  it("finds enabled controls only", () => {
    const box = document.createElement("div");
    box.innerHTML =
      '<button>a</button><button disabled>b</button><a href="#">c</a><a>d</a><input type="hidden"><div tabindex="-1">e</div><div tabindex="0">f</div>';
    expect(focusableWithin(box).map((el) => el.textContent)).toEqual(["a", "c", "f"]);
  });

  it("wraps around at both ends", () => {
    const [a, b, c] = ["a", "b", "c"].map(() => document.createElement("button"));
    const list = [a!, b!, c!];
    expect(wrapFocus(list, c!, false)).toBe(a);
    expect(wrapFocus(list, a!, true)).toBe(c);
    expect(wrapFocus(list, a!, false)).toBe(b);
    expect(wrapFocus(list, null, false)).toBe(a);
    expect(wrapFocus([], null, false)).toBeNull();
  });
});
