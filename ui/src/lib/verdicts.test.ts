import { describe, expect, it } from "vitest";
import { verdictOfReason, verdictText } from "./verdicts";

describe("verdictText", () => {
  it("drops the verdict the note starts with: the badge says it", () => {
    expect(verdictText("drifted", "drifted: go is now 1.23 (was 1.22)")).toBe(
      "go is now 1.23 (was 1.22)",
    );
    expect(verdictText("orphaned", "orphaned: docs/runbook.md was deleted in 1a2b3c")).toBe(
      "docs/runbook.md was deleted in 1a2b3c",
    );
  });

  it("says the verdict's sentence when the server gives no note", () => {
    expect(verdictText("fresh", null)).toBe("The code still agrees.");
    expect(verdictText("unchecked", null)).toBe("Not checked.");
  });

  it("keeps a note that does not start with a verdict", () => {
    expect(verdictText("unchecked", "no working folder known")).toBe("no working folder known");
  });
});

describe("verdictOfReason", () => {
  it("splits a reason that starts with a verdict", () => {
    expect(verdictOfReason("orphaned: docs/runbook.md was deleted")).toEqual({
      verdict: "orphaned",
      rest: "docs/runbook.md was deleted",
    });
  });

  it("is null for any other reason", () => {
    expect(verdictOfReason("used in 3 injections, none corrected")).toBeNull();
    expect(verdictOfReason("superseded on 2 Mar 2026 by #4: Use pnpm")).toBeNull();
  });
});
