import { describe, expect, it } from "vitest";
import { render } from "../test/render";
import { Highlighted } from "./Highlighted";

describe("Highlighted", () => {
  it("wraps matches in <mark> elements", async () => {
    const { container } = await render(
      <Highlighted text="This repo uses pnpm, never npm." terms={["pnpm"]} />,
    );
    const marks = container.querySelectorAll("mark");
    expect(marks).toHaveLength(1);
    expect(marks[0]!.textContent).toBe("pnpm");
    expect(container.textContent).toBe("This repo uses pnpm, never npm.");
  });

  it("renders HTML in memory content as text, never as elements", async () => {
    const text = '<img src=x onerror="alert(1)"><script>alert(2)</script> pnpm <b>bold</b>';
    const { container } = await render(
      <Highlighted text={text} terms={["pnpm", "img", "script"]} />,
    );
    expect(container.querySelector("img, script, b")).toBeNull();
    expect(container.textContent).toBe(text);
    expect([...container.querySelectorAll("mark")].map((m) => m.textContent)).toEqual([
      "img",
      "script",
      "script",
      "pnpm",
    ]);
    expect(container.innerHTML).toContain("&lt;b&gt;bold&lt;/b&gt;");
  });
});
