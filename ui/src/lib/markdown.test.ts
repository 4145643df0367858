import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./markdown";

function parse(html: string): HTMLElement {
  const box = document.createElement("div");
  box.innerHTML = html;
  return box;
}

describe("renderMarkdown", () => {
  it("renders headings, lists, emphasis and code", () => {
    const dom = parse(renderMarkdown("# Title\n\n- one\n- **two**\n\n```ts\nconst a = 1;\n```"));
    expect(dom.querySelector("h1")?.textContent).toBe("Title");
    expect(dom.querySelectorAll("li")).toHaveLength(2);
    expect(dom.querySelector("strong")?.textContent).toBe("two");
    expect(dom.querySelector("pre code")?.textContent).toContain("const a = 1;");
  });

  it("escapes raw HTML so no element or handler comes from the content", () => {
    const source =
      'Hi <img src=x onerror=alert(1)>\n\n<script>alert(2)</script>\n\n<a href="javascript:alert(3)">x</a>';
    const html = renderMarkdown(source);
    const dom = parse(html);
    expect(dom.querySelector("img, script, a, iframe")).toBeNull();
    expect(html).not.toMatch(/<img|<script/i);
    expect(dom.textContent).toContain("<img src=x onerror=alert(1)>");
    expect(dom.textContent).toContain("<script>alert(2)</script>");
  });

  it("refuses javascript: links and marks the others noopener noreferrer", () => {
    const dom = parse(
      renderMarkdown(
        "[bad](javascript:alert(1)) [good](https://example.org/x) https://example.com",
      ),
    );
    const links = [...dom.querySelectorAll("a")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual([
      "https://example.org/x",
      "https://example.com",
    ]);
    for (const link of links) expect(link.getAttribute("rel")).toBe("noopener noreferrer");
  });

  it("does not load images from content", () => {
    const dom = parse(renderMarkdown("![pixel](https://tracker.example/p.gif)"));
    expect(dom.querySelector("img")).toBeNull();
  });
});
