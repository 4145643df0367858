import { describe, expect, it } from "vitest";
import { formatDay, periodDays, shareUsed, times } from "./context";

describe("shareUsed", () => {
  it("is a dash when nothing was judged", () => {
    expect(shareUsed(0, 0)).toBe("–");
  });

  it("rounds to a whole percent", () => {
    expect(shareUsed(1, 3)).toBe("33%");
    expect(shareUsed(2, 3)).toBe("67%");
    expect(shareUsed(0, 5)).toBe("0%");
    expect(shareUsed(5, 5)).toBe("100%");
  });

  it("does not round a few uses down to none or a few misses up to all", () => {
    expect(shareUsed(1, 400)).toBe("<1%");
    expect(shareUsed(399, 400)).toBe(">99%");
  });
});

describe("periodDays", () => {
  it("takes an offered period and falls back to 30 days", () => {
    expect(periodDays("7")).toBe(7);
    expect(periodDays("90")).toBe(90);
    expect(periodDays(null)).toBe(30);
    expect(periodDays("12")).toBe(30);
    expect(periodDays("abc")).toBe(30);
  });
});

describe("formatDay", () => {
  it("shows the UTC day whatever the browser's time zone", () => {
    expect(formatDay("2026-11-26")).toBe("26 Nov 2026");
    expect(formatDay("not a day")).toBe("not a day");
  });
});

describe("times", () => {
  it("counts in words", () => {
    expect(times(1)).toBe("1 time");
    expect(times(4)).toBe("4 times");
  });
});
