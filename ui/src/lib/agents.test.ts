import { describe, expect, it } from "vitest";
import { sourceChoices, sourceLabel } from "./agents";

describe("sourceLabel", () => {
  it("names the agents and leaves other sources as stored", () => {
    expect(sourceLabel("codex")).toBe("Codex CLI");
    expect(sourceLabel("claude-code")).toBe("Claude Code");
    expect(sourceLabel("distill")).toBe("distill");
  });
});

describe("sourceChoices", () => {
  it("offers the most used sources first, with their counts", () => {
    const choices = sourceChoices({ distill: 4, "claude-code": 12, codex: 4, api: 0 }, "");
    expect(choices).toEqual([
      { value: "claude-code", label: "Claude Code (12)" },
      { value: "codex", label: "Codex CLI (4)" },
      { value: "distill", label: "distill (4)" },
    ]);
  });

  it("keeps offering the current filter when nothing counts it", () => {
    expect(sourceChoices(undefined, "gemini")).toEqual([
      { value: "gemini", label: "Gemini CLI (0)" },
    ]);
  });
});
