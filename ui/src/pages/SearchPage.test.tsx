import { afterEach, describe, expect, it, vi } from "vitest";
import { hit } from "../test/fixtures";
import { interact, jsonResponse, render } from "../test/render";
import { useLocation } from "../lib/router";
import { SearchPage } from "./SearchPage";

afterEach(() => vi.unstubAllGlobals());

function Routed() {
  const { params } = useLocation();
  return <SearchPage params={params} />;
}

function serve(results: ReturnType<typeof hit>[]) {
  const bodies: unknown[] = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string, init: RequestInit = {}) => {
      if (url === "/api/projects")
        return jsonResponse([
          { project: "acme-api", project_path: "/x", count: 3, last_at: "2026-04-14T00:00:00Z" },
        ]);
      bodies.push(JSON.parse(String(init.body)));
      return jsonResponse({ mode: "keyword", hits: results, took_ms: 3.2 });
    }),
  );
  return bodies;
}

async function settle() {
  await interact(() => new Promise((resolve) => setTimeout(resolve, 0)));
}

describe("SearchPage", () => {
  it("says what to try before anything is typed", async () => {
    serve([]);
    window.history.replaceState(null, "", "/ui/search");
    const { container } = await render(<Routed />);
    expect(container.querySelector(".empty-state")?.textContent).toContain(
      "Semantic finds memories by meaning",
    );
    expect(container.querySelector("input#search-box")).not.toBeNull();
  });

  it("sends the URL's query and filters, and highlights terms without rendering content as HTML", async () => {
    const bodies = serve([
      hit({
        id: 7,
        content: "Use pnpm <img src=x onerror=alert(1)> and <script>alert(2)</script>",
        kind: "note",
        score: 0.2,
        keyword_score: 0.2,
        similarity: null,
      }),
    ]);
    window.history.replaceState(
      null,
      "",
      "/ui/search?q=pnpm&mode=keyword&kind=note&project=acme-api",
    );
    const { container } = await render(<Routed />);
    await settle();
    expect(bodies).toEqual([
      { query: "pnpm", mode: "keyword", limit: 30, project: "acme-api", kind: "note" },
    ]);
    const result = container.querySelector(".result")!;
    expect(result.querySelector("mark")?.textContent).toBe("pnpm");
    expect(result.querySelector("img, script")).toBeNull();
    expect(result.textContent).toContain("<script>alert(2)</script>");
    expect(result.querySelector('[role="meter"]')?.getAttribute("aria-valuetext")).toBe("0.200");
  });

  it("explains an empty result and what to change", async () => {
    serve([]);
    window.history.replaceState(null, "", "/ui/search?q=helm&mode=semantic&min=0.6");
    const { container } = await render(<Routed />);
    await settle();
    const text = container.querySelector(".empty-state")?.textContent ?? "";
    expect(text).toContain("No memories matched “helm”");
    expect(text).toContain("Lower the similarity threshold (now 0.60)");
  });
});
