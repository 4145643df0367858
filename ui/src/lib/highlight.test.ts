import { describe, expect, it } from "vitest";
import { queryTerms, snippet, splitHighlights } from "./highlight";

describe("queryTerms", () => {
  it("keeps words of two or more characters, lowercased, longest first, without operators", () => {
    expect(queryTerms('use "pnpm" OR npm -yarn a')).toEqual(["pnpm", "yarn", "npm", "use"]);
  });

  it("returns nothing for a blank query", () => {
    expect(queryTerms("   ")).toEqual([]);
  });
});

describe("splitHighlights", () => {
  it("marks every case-insensitive match and gives the text back when joined", () => {
    const text = "Use PNPM, never npm; pnpm-lock.yaml stays.";
    const segments = splitHighlights(text, ["pnpm", "npm"]);
    expect(segments.map((s) => s.text).join("")).toBe(text);
    expect(segments.filter((s) => s.match).map((s) => s.text)).toEqual(["PNPM", "npm", "pnpm"]);
  });

  it("treats regular-expression characters in the query as plain text", () => {
    const segments = splitHighlights("run pnpm lint && pnpm test (a+b) [x]", [
      "(a+b)",
      "[x]",
      ".*",
    ]);
    expect(segments.filter((s) => s.match).map((s) => s.text)).toEqual(["(a+b)", "[x]"]);
  });

  it("leaves markup in the text as text segments", () => {
    const text = "<img src=x onerror=alert(1)> pnpm <script>alert(1)</script>";
    const segments = splitHighlights(text, ["pnpm", "script"]);
    expect(segments.map((s) => s.text).join("")).toBe(text);
    expect(segments.filter((s) => s.match).map((s) => s.text)).toEqual([
      "pnpm",
      "script",
      "script",
    ]);
  });

  it("returns one plain segment without terms and none for empty text", () => {
    expect(splitHighlights("abc", [])).toEqual([{ text: "abc", match: false }]);
    expect(splitHighlights("", ["a"])).toEqual([]);
  });
});

describe("snippet", () => {
  it("cuts around the first match with ellipses on both sides", () => {
    const text = `${"lorem ipsum ".repeat(40)}the pnpm rule ${"dolor sit ".repeat(40)}`;
    const cut = snippet(text, ["pnpm"], 80);
    expect(cut).toContain("pnpm");
    expect(cut.startsWith("…")).toBe(true);
    expect(cut.endsWith("…")).toBe(true);
    expect(cut.length).toBeLessThanOrEqual(82);
  });

  it("returns short text whole, on one line", () => {
    expect(snippet("a\n  b", ["b"], 80)).toBe("a b");
  });
});
