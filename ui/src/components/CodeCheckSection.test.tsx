import { afterEach, describe, expect, it, vi } from "vitest";
import { memory } from "../test/fixtures";
import { byText, click, interact, jsonResponse, render } from "../test/render";
import type { CodeCheck } from "../types";
import { CodeCheckSection } from "./CodeCheckSection";

afterEach(() => vi.unstubAllGlobals());

function check(overrides: Partial<CodeCheck>): CodeCheck {
  return {
    memory_id: 7,
    cwd: "/home/dev/acme-api",
    verdict: "fresh",
    note: null,
    anchors: [{ kind: "path", name: "go.mod", value: null }],
    can_record: false,
    ...overrides,
  };
}

async function settle() {
  await interact(() => new Promise((resolve) => setTimeout(resolve, 0)));
}

describe("CodeCheckSection", () => {
  it("says what changed and records the current value as a new memory", async () => {
    const drifted = check({
      verdict: "drifted",
      note: "drifted: go is now 1.23 (was 1.22)",
      anchors: [
        { kind: "version", name: "go", value: "1.22" },
        { kind: "path", name: "go.mod", value: null },
      ],
      can_record: true,
    });
    const calls: { method: string; url: string; body: unknown }[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn(async (url: string, init?: RequestInit) => {
        const method = init?.method ?? "GET";
        calls.push({ method, url, body: init?.body ? JSON.parse(String(init.body)) : null });
        if (method === "PATCH") {
          return jsonResponse({
            status: "recorded",
            memory: memory({ id: 8, supersedes: 7 }),
            similar: null,
            redacted: 0,
          });
        }
        return jsonResponse(drifted);
      }),
    );
    const opened: number[] = [];
    const said = memory({ id: 7, metadata: { git_branch: "main", git_commit: "4c1e9a7d0b2f" } });
    const { container } = await render(
      <CodeCheckSection memory={said} onNavigate={(id) => opened.push(id)} />,
    );
    await settle();
    expect(container.querySelector(".written-on")?.textContent).toBe(
      "Said on branch main at commit 4c1e9a7d0b2f.",
    );

    expect(container.querySelector(".verdict")?.textContent).toBe(
      "drifted go is now 1.23 (was 1.22)",
    );
    expect(container.querySelector(".anchor-list")?.textContent).toContain("go = 1.22");
    await click(byText(container, "button", "Record the current value"));
    await settle();

    expect(calls.filter((call) => call.method === "PATCH")).toEqual([
      {
        method: "PATCH",
        url: "/api/memories/7",
        body: { current_from: "/home/dev/acme-api" },
      },
    ]);
    expect(opened).toEqual([8]);
  });

  it("offers no button for a fresh memory and shows nothing for one naming no code", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => jsonResponse(check({}))),
    );
    const fresh = await render(
      <CodeCheckSection memory={memory({ id: 7 })} onNavigate={() => {}} />,
    );
    await settle();
    expect(fresh.container.querySelector(".verdict")?.textContent).toBe(
      "fresh The code still agrees.",
    );
    expect(fresh.container.querySelector("button")).toBeNull();
    expect(fresh.container.querySelector(".written-on")).toBeNull();

    vi.stubGlobal(
      "fetch",
      vi.fn(async () => jsonResponse(check({ anchors: [] }))),
    );
    const plain = await render(
      <CodeCheckSection memory={memory({ id: 9 })} onNavigate={() => {}} />,
    );
    await settle();
    expect(plain.container.querySelector(".code-check")).toBeNull();
  });
});
