import { afterEach, describe, expect, it, vi } from "vitest";
import { memory } from "../test/fixtures";
import { byText, click, interact, jsonResponse, render, type } from "../test/render";
import { MemoryDetail } from "./MemoryDetail";

afterEach(() => vi.unstubAllGlobals());

type Call = { method: string; url: string; body: unknown };

function server(initial = memory({ id: 42, tags: ["tooling"] })) {
  let current = initial;
  const calls: Call[] = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const method = init.method ?? "GET";
      const body = init.body ? JSON.parse(String(init.body)) : undefined;
      calls.push({ method, url, body });
      if (url.startsWith("/api/memories/42/related")) return jsonResponse([]);
      if (url.startsWith("/api/memories/42/versions")) return jsonResponse([]);
      if (url === "/api/memories/42" && method === "GET") return jsonResponse(current);
      if (url === "/api/memories/42" && method === "PATCH") {
        current = { ...current, ...body };
        return jsonResponse({ status: "updated", memory: current, similar: null, redacted: 0 });
      }
      if (url === "/api/memories/42" && method === "DELETE") {
        current = { ...current, deleted_at: "2026-04-20T00:00:00Z" };
        return jsonResponse(current);
      }
      if (url === "/api/memories/42/restore") {
        current = { ...current, deleted_at: null };
        return jsonResponse(current);
      }
      return jsonResponse({ error: { code: "not_found", message: `no route ${url}` } }, 404);
    }),
  );
  return calls;
}

async function settle() {
  await interact(() => new Promise((resolve) => setTimeout(resolve, 0)));
}

describe("MemoryDetail", () => {
  it("shows content with its line breaks, metadata and tags", async () => {
    server(memory({ id: 42, content: "line one\nline two", tags: ["a", "b"], session_id: "abc" }));
    const { container } = await render(<MemoryDetail id={42} onNavigate={() => {}} />);
    await settle();
    expect(container.querySelector(".memory-content")?.textContent).toBe("line one\nline two");
    expect([...container.querySelectorAll(".tag")].map((t) => t.textContent)).toEqual(["a", "b"]);
    expect(container.textContent).toContain("Nothing close to this one yet.");
  });

  it("edits content and tags with PATCH, then deletes and restores", async () => {
    const calls = server();
    const { container } = await render(<MemoryDetail id={42} onNavigate={() => {}} />);
    await settle();

    await click(byText(container, "button", "Edit"));
    const [content] = container.querySelectorAll("textarea");
    await type(content!, "Use pnpm 9.");
    await type(container.querySelector('form input[type="text"]'), "tooling, decision, tooling");
    await click(byText(container, "button", "Save"));
    await settle();
    expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({
      content: "Use pnpm 9.",
      tags: ["tooling", "decision"],
    });
    expect(container.textContent).toContain("Saved.");
    expect(container.querySelector(".memory-content")?.textContent).toBe("Use pnpm 9.");

    await click(byText(container, "button", "Delete"));
    await settle();
    expect(container.querySelector(".badge-danger")?.textContent).toBe("deleted");
    await click(byText(container, "button", "Restore"));
    await settle();
    expect(container.querySelector(".badge-danger")).toBeNull();
    expect(calls.map((c) => c.method)).toContain("POST");
  });

  it("shows the server's message when a teammate's memory may not be changed", async () => {
    const message = "memory 42 belongs to alice; only they can change it";
    server(memory({ id: 42, owner: "alice", visibility: "shared" }));
    const fetch = vi.mocked(globalThis.fetch);
    const answer = fetch.getMockImplementation()!;
    fetch.mockImplementation(async (url, init) =>
      init?.method === "DELETE"
        ? jsonResponse({ error: { code: "forbidden", message } }, 403)
        : answer(url, init),
    );
    const { container } = await render(<MemoryDetail id={42} onNavigate={() => {}} />);
    await settle();
    expect(container.textContent).toContain("by alice");

    await click(byText(container, "button", "Delete"));
    await settle();
    expect(container.querySelector('[role="alert"]')?.textContent).toContain(message);
    // Still shown as it was: not marked deleted.
    expect(container.querySelector(".badge-danger")).toBeNull();
  });

  it("shows the server's message when the memory is missing", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () =>
        jsonResponse({ error: { code: "not_found", message: "memory 42 does not exist" } }, 404),
      ),
    );
    const { container } = await render(<MemoryDetail id={42} onNavigate={() => {}} />);
    await settle();
    expect(container.querySelector('[role="alert"]')?.textContent).toContain(
      "memory 42 does not exist",
    );
  });
});
