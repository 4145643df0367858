import { afterEach, describe, expect, it, vi } from "vitest";
import { byText, click, interact, jsonResponse, render } from "../test/render";
import { useLocation } from "../lib/router";
import type { ContextReport } from "../types";
import { ContextPage } from "./ContextPage";

afterEach(() => vi.unstubAllGlobals());

function Routed() {
  const { params } = useLocation();
  return <ContextPage params={params} />;
}

const HOSTILE = "Ship with <b>html</b> <img src=x onerror=alert(1)>";

function report(overrides: Partial<ContextReport> = {}): ContextReport {
  return {
    since: "2026-10-27T16:00:00+00:00",
    project: null,
    totals: {
      injections: 4,
      memories: 9,
      chars: 4800,
      tokens: 1200,
      judged: 6,
      used: 2,
      contradicted: 1,
    },
    days: [
      {
        day: "2026-11-26",
        project: "acme-api",
        injections: 4,
        memories: 9,
        tokens: 1200,
        judged: 6,
        used: 2,
      },
    ],
    most_injected: [{ id: 3, injections: 4, preview: "The acme-api project uses pnpm." }],
    never_used: [{ id: 7, judged: 3, count: 3, preview: HOSTILE }],
    most_used: [{ id: 3, judged: 2, count: 1, preview: "The acme-api project uses pnpm." }],
    contradicted: [{ id: 5, judged: 1, count: 1, preview: "Orders are paged by offset." }],
    ...overrides,
  };
}

type Call = { url: string; method: string };

/** The server: /api/projects, /api/context answering `answers` in turn, DELETE of memory 7. */
function serve(...answers: ContextReport[]) {
  const calls: Call[] = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const method = init.method ?? "GET";
      calls.push({ url, method });
      if (url === "/api/projects") return jsonResponse([]);
      if (method === "DELETE") return jsonResponse({ id: 7, deleted_at: "2026-11-26T10:00:00Z" });
      const contextCalls = calls.filter((c) => c.url.startsWith("/api/context")).length;
      return jsonResponse(answers[Math.min(contextCalls, answers.length) - 1]);
    }),
  );
  return calls;
}

async function settle() {
  await interact(() => new Promise((resolve) => setTimeout(resolve, 0)));
}

describe("ContextPage", () => {
  it("asks for the URL's project and period and shows totals, days and share used", async () => {
    const calls = serve(report({ project: "acme-api" }));
    window.history.replaceState(null, "", "/ui/context?project=acme-api&days=7");
    const { container } = await render(<Routed />);
    await settle();

    expect(calls.map((c) => c.url)).toContain("/api/context?project=acme-api&days=7");
    const totals = container.querySelector('[aria-label="Totals"]')?.textContent ?? "";
    expect(totals).toContain("injections4");
    expect(totals).toContain("estimated tokens1,200");
    expect(totals).toContain("share used33%");
    expect(totals).toContain("used, then corrected1");
    const cells = [...container.querySelectorAll("tbody td")].map((td) => td.textContent);
    expect(cells).toEqual(["26 Nov 2026", "acme-api", "4", "1,200", "33%"]);
  });

  it("renders memory text as text and retires a never-used memory after confirming", async () => {
    const calls = serve(report(), report({ never_used: [] }));
    window.history.replaceState(null, "", "/ui/context");
    const { container } = await render(<Routed />);
    await settle();

    const item = byText(container, ".context-list li", "#7")!;
    expect(item.querySelector("b, img")).toBeNull();
    expect(item.textContent).toContain(HOSTILE);
    expect(item.querySelector("a")?.getAttribute("href")).toBe("/ui/memories/7");
    expect(item.textContent).toContain("judged 3 times, never used");

    await click(item.querySelector('button[aria-label="Retire #7"]'));
    expect(calls.some((c) => c.method === "DELETE")).toBe(false);
    await click(byText(item, '[role="group"] button', "Retire"));
    await settle();

    expect(calls.filter((c) => c.method === "DELETE").map((c) => c.url)).toEqual([
      "/api/memories/7",
    ]);
    expect(container.querySelector('[role="status"]')?.textContent).toContain("Retired #7");
    expect(byText(container, ".context-list li", "#7")).toBeNull();
    expect(byText(container, ".panel", "Never used")?.textContent).toContain(
      "None: every judged memory was used at least once.",
    );
  });

  it("says when nothing was injected in the period", async () => {
    serve(
      report({
        totals: {
          injections: 0,
          memories: 0,
          chars: 0,
          tokens: 0,
          judged: 0,
          used: 0,
          contradicted: 0,
        },
        days: [],
        most_injected: [],
        never_used: [],
        most_used: [],
        contradicted: [],
      }),
    );
    window.history.replaceState(null, "", "/ui/context");
    const { container } = await render(<Routed />);
    await settle();
    expect(container.querySelector(".empty-state")?.textContent).toContain(
      "Nothing injected yet in this period.",
    );
    expect(container.querySelector("table")).toBeNull();
  });
});
