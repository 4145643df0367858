import { describe, expect, it } from "vitest";
import { hit } from "../test/fixtures";
import {
  bestScore,
  hitSnippet,
  hitTitle,
  noResultHints,
  replacedByLabel,
  scoreView,
  searchRequest,
  searchStateFrom,
} from "./search";

describe("searchStateFrom and searchRequest", () => {
  it("reads the URL and builds the request with every filter", () => {
    const state = searchStateFrom(
      new URLSearchParams(
        "q=pnpm&mode=semantic&project=acme-api&kind=preference&source=codex&min=0.45",
      ),
    );
    expect(searchRequest(state)).toEqual({
      query: "pnpm",
      mode: "semantic",
      limit: 30,
      project: "acme-api",
      kind: "preference",
      source: "codex",
      min_similarity: 0.45,
    });
  });

  it("falls back to hybrid, any kind and the default threshold for unknown values", () => {
    const state = searchStateFrom(new URLSearchParams("q=x&mode=fuzzy&kind=nope&min=abc"));
    expect(state.mode).toBe("hybrid");
    expect(state.kind).toBe("");
    expect(state.minSimilarity).toBe(0.15);
  });

  it("sends no similarity floor in keyword mode and nothing for a blank query", () => {
    expect(searchRequest(searchStateFrom(new URLSearchParams("q=ERR_POOL&mode=keyword")))).toEqual({
      query: "ERR_POOL",
      mode: "keyword",
      limit: 30,
    });
    expect(searchRequest(searchStateFrom(new URLSearchParams("q=%20%20")))).toBeNull();
  });
});

describe("scoreView", () => {
  it("shows similarity on its own 0..1 scale in semantic mode", () => {
    const view = scoreView(hit({ similarity: 0.62, score: 0.62 }), "semantic", 0.9);
    expect(view.fraction).toBeCloseTo(0.62);
    expect(view.label).toBe("0.620");
    expect(view.name).toBe("similarity");
  });

  it("draws fused and keyword scores relative to the best hit", () => {
    const hits = [
      hit({ id: 1, score: 0.032, fused_score: 0.032 }),
      hit({ id: 2, score: 0.016, fused_score: 0.016 }),
    ];
    const best = bestScore(hits);
    expect(scoreView(hits[1]!, "hybrid", best).fraction).toBeCloseTo(0.5);
    expect(scoreView(hits[1]!, "hybrid", best).detail).toContain("fused");
  });
});

describe("hit title and snippet", () => {
  it("uses the first line as title and no snippet when the title says it all", () => {
    const short = hit({ content: "This repository uses pnpm, never npm." });
    expect(hitTitle(short)).toBe("This repository uses pnpm, never npm.");
    expect(hitSnippet(short, ["pnpm"])).toBe("");
  });

  it("gives a snippet of the lines under the title", () => {
    const long = hit({ content: `# Handbook\n${"text ".repeat(100)} pnpm install` });
    expect(hitTitle(long)).toBe("# Handbook");
    expect(hitSnippet(long, ["pnpm"])).toContain("pnpm");
    expect(hitSnippet(long, ["pnpm"])).not.toContain("Handbook");
  });

  it("snippets the whole text when the title cut its line short", () => {
    const line = `${"word ".repeat(40)}pnpm at the end`;
    const cut = hit({ content: line });
    expect(hitTitle(cut).endsWith("…")).toBe(true);
    expect(hitSnippet(cut, ["pnpm"])).toContain("pnpm at the end");
  });
});

describe("noResultHints", () => {
  it("suggests what would widen the search", () => {
    const hints = noResultHints(
      searchStateFrom(new URLSearchParams("q=x&mode=semantic&min=0.5&project=acme-api")),
    );
    expect(hints.join(" ")).toContain("0.50");
    expect(hints.join(" ")).toContain("hybrid");
    expect(hints.join(" ")).toContain("acme-api");
  });
});

describe("replacedByLabel", () => {
  it("names the successor of a superseded hit", () => {
    expect(replacedByLabel({ superseded_by: 42 })).toBe("replaced by #42");
  });

  it("says nothing for a current hit", () => {
    expect(replacedByLabel({ superseded_by: null })).toBeNull();
  });
});
