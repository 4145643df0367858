import { describe, expect, it } from "vitest";
import { firstLine, formatBytes, formatScore, relativeTime } from "./format";

describe("format", () => {
  it("formats sizes in binary units", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(614_400)).toBe("600 KB");
    expect(formatBytes(3 * 1024 ** 3)).toBe("3.0 GB");
  });

  it("says how long ago", () => {
    const now = new Date("2026-04-20T12:00:00Z");
    expect(relativeTime("2026-04-17T12:00:00Z", now)).toBe("3 days ago");
    expect(relativeTime("2026-04-20T11:59:50Z", now)).toBe("just now");
  });

  it("keeps tiny fused scores readable", () => {
    expect(formatScore(0.61234)).toBe("0.612");
    expect(formatScore(0.0049)).toBe("4.9e-3");
  });

  it("cuts the first line", () => {
    expect(firstLine("  title\nbody")).toBe("title");
    expect(firstLine("abcdefghij", 5)).toBe("abcd…");
  });
});
