import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonResponse } from "../test/render";
import { loadAgents, setAgents, sourceChoices, sourceLabel } from "./agents";

const AGENTS = [
  { name: "claude-code", label: "Claude Code" },
  { name: "codex", label: "Codex CLI" },
  { name: "gemini", label: "Gemini CLI" },
];

afterEach(() => {
  vi.unstubAllGlobals();
  setAgents([]);
});

describe("sourceLabel", () => {
  it("names the agents the server lists and leaves other sources as stored", async () => {
    const urls: string[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn(async (url: string) => {
        urls.push(url);
        return jsonResponse(AGENTS);
      }),
    );
    expect(sourceLabel("codex")).toBe("codex");

    await loadAgents();

    expect(urls).toEqual(["/api/agents"]);
    expect(sourceLabel("codex")).toBe("Codex CLI");
    expect(sourceLabel("claude-code")).toBe("Claude Code");
    expect(sourceLabel("claude-ai")).toBe("claude.ai");
    expect(sourceLabel("distill")).toBe("distill");
  });

  it("keeps sources as stored when the agents cannot be loaded", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => jsonResponse({ error: { code: "x", message: "down" } }, 503)),
    );

    await loadAgents();

    expect(sourceLabel("codex")).toBe("codex");
  });
});

describe("sourceChoices", () => {
  it("offers the most used sources first, with their counts", () => {
    setAgents(AGENTS);
    const choices = sourceChoices({ distill: 4, "claude-code": 12, codex: 4, api: 0 }, "");
    expect(choices).toEqual([
      { value: "claude-code", label: "Claude Code (12)" },
      { value: "codex", label: "Codex CLI (4)" },
      { value: "distill", label: "distill (4)" },
    ]);
  });

  it("keeps offering the current filter when nothing counts it", () => {
    setAgents(AGENTS);
    expect(sourceChoices(undefined, "gemini")).toEqual([
      { value: "gemini", label: "Gemini CLI (0)" },
    ]);
  });
});
