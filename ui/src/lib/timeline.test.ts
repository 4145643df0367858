import { describe, expect, it } from "vitest";
import { point } from "../test/fixtures";
import type { Timeline, TimelineDay } from "../types";
import {
  assignLanes,
  DAY_MS,
  dayRuns,
  dotRadius,
  jitter,
  layoutTimeline,
  OTHER_LANE,
  smoothLine,
  timeDomain,
} from "./timeline";

const NOW = Date.parse("2026-04-30T12:00:00Z");

function days(counts: Record<string, number>, day = "2026-04-14"): TimelineDay[] {
  return Object.entries(counts).map(([project, count]) => ({ day, project, count }));
}

describe("assignLanes", () => {
  it("gives the six busiest projects a lane and folds the rest into other", () => {
    const counts = { a: 80, b: 70, c: 60, d: 50, e: 40, f: 30, g: 20, h: 10 };
    const lanes = assignLanes(days(counts), []);
    expect(lanes.keys).toEqual(["a", "b", "c", "d", "e", "f", OTHER_LANE]);
    expect(lanes.members.get(OTHER_LANE)).toEqual(["g", "h"]);
    expect(lanes.laneOf.get("h")).toBe(OTHER_LANE);
    expect(lanes.totals.get(OTHER_LANE)).toBe(30);
  });

  it("folds nothing when there are six projects or fewer", () => {
    const lanes = assignLanes(days({ a: 1, b: 2, c: 3 }), []);
    expect(lanes.keys).toEqual(["c", "b", "a"]);
    expect(lanes.members.has(OTHER_LANE)).toBe(false);
  });

  it("ranks by the day counts, which cover every match, not by the points returned", () => {
    const points = Array.from({ length: 5 }, (_, i) => point({ id: i + 1, project: "few-points" }));
    const lanes = assignLanes(days({ "many-memories": 500, "few-points": 5 }), points, 1);
    expect(lanes.keys).toEqual(["many-memories", OTHER_LANE]);
  });

  it("counts the points of projects missing from the day counts", () => {
    const lanes = assignLanes([], [point({ id: 1, project: "x" }), point({ id: 2, project: "x" })]);
    expect(lanes.totals.get("x")).toBe(2);
  });
});

describe("timeDomain", () => {
  const timeline: Timeline = {
    total: 2,
    truncated: false,
    points: [
      point({ created_at: "2026-04-10T00:00:00Z" }),
      point({ id: 2, created_at: "2026-04-20T00:00:00Z" }),
    ],
    days: days({ "acme-api": 2 }, "2026-04-10"),
  };

  it("ends now for a fixed range", () => {
    expect(timeDomain(timeline, "7d", NOW)).toEqual([NOW - 7 * DAY_MS, NOW]);
  });

  it("spans the data, padded, for all", () => {
    const [start, end] = timeDomain(timeline, "all", NOW);
    expect(start).toBeLessThan(Date.parse("2026-04-10T00:00:00Z"));
    expect(end).toBeGreaterThan(Date.parse("2026-04-20T00:00:00Z"));
    expect(end).toBeLessThan(NOW);
  });
});

describe("dots and river", () => {
  it("sizes dots by length, within bounds", () => {
    expect(dotRadius(0)).toBe(2.5);
    expect(dotRadius(4000)).toBe(8);
    expect(dotRadius(100_000)).toBe(8);
    expect(dotRadius(400)).toBeGreaterThan(dotRadius(40));
  });

  it("spreads dots deterministically", () => {
    expect(jitter(42)).toBe(jitter(42));
    for (const id of [1, 2, 3, 999_999]) {
      expect(jitter(id)).toBeGreaterThanOrEqual(-0.5);
      expect(jitter(id)).toBeLessThan(0.5);
    }
  });

  it("pads each run of busy days with zero days and splits at gaps", () => {
    const runs = dayRuns(
      new Map([
        [10, 2],
        [11, 3],
        [20, 1],
      ]),
    );
    expect(runs).toEqual([
      [
        [9, 0],
        [10, 2],
        [11, 3],
        [12, 0],
      ],
      [
        [19, 0],
        [20, 1],
        [21, 0],
      ],
    ]);
    expect(dayRuns(new Map())).toEqual([]);
  });

  it("draws smooth paths that start with a move", () => {
    expect(smoothLine([])).toBe("");
    expect(
      smoothLine([
        [0, 0],
        [10, 5],
        [20, 0],
      ]),
    ).toMatch(/^M0,0Q10,5 15,2\.5L20,0$/);
  });
});

describe("layoutTimeline", () => {
  const timeline: Timeline = {
    total: 3,
    truncated: false,
    points: [
      point({
        id: 3,
        project: "acme-api",
        created_at: "2026-04-16T10:00:00Z",
        kind: "note",
        length: 4000,
      }),
      point({ id: 1, project: "acme-api", created_at: "2026-04-14T09:00:00Z" }),
      point({ id: 2, project: "acme.web_ui", created_at: "2026-04-15T09:00:00Z" }),
    ],
    days: [
      { day: "2026-04-14", project: "acme-api", count: 1 },
      { day: "2026-04-16", project: "acme-api", count: 1 },
      { day: "2026-04-15", project: "acme.web_ui", count: 1 },
    ],
  };

  it("puts every point in its project's lane, oldest first, inside the plot", () => {
    const layout = layoutTimeline(timeline, { width: 800, range: "30d", now: NOW });
    expect(layout.lanes.map((lane) => lane.key)).toEqual(["acme-api", "acme.web_ui"]);
    expect(layout.dots.map((dot) => dot.id)).toEqual([1, 2, 3]);
    for (const dot of layout.dots) {
      const lane = layout.lanes.find((l) => l.key === dot.lane)!;
      expect(dot.x).toBeGreaterThanOrEqual(0);
      expect(dot.x).toBeLessThanOrEqual(800);
      expect(dot.y).toBeGreaterThan(lane.top);
      expect(dot.y).toBeLessThan(lane.top + lane.height);
    }
    expect(layout.dots[2]!.r).toBe(8);
    expect(layout.dots[0]!.x).toBeLessThan(layout.dots[2]!.x);
  });

  it("draws a closed river for each lane with counts, and a bed joining them", () => {
    const layout = layoutTimeline(timeline, { width: 800, range: "30d", now: NOW });
    for (const lane of layout.lanes) {
      expect(lane.river).toMatch(/^M.*Z$/);
      expect(lane.bed).not.toBeNull();
    }
    expect(layout.ticks.length).toBeGreaterThan(1);
  });

  it("lays out the endpoint's largest answer (2,000 points, 5,000 day rows) in one pass", () => {
    const projects = Array.from({ length: 12 }, (_, i) => `project-${i}`);
    const big: Timeline = {
      total: 50_000,
      truncated: true,
      points: Array.from({ length: 2000 }, (_, i) =>
        point({
          id: i + 1,
          project: projects[i % 12]!,
          created_at: new Date(NOW - (i % 400) * DAY_MS).toISOString(),
          length: (i * 37) % 5000,
        }),
      ),
      days: Array.from({ length: 5000 }, (_, i) => ({
        day: new Date(NOW - Math.floor(i / 12) * DAY_MS).toISOString().slice(0, 10),
        project: projects[i % 12]!,
        count: 10,
      })),
    };
    const layout = layoutTimeline(big, { width: 1200, range: "all", now: NOW });
    expect(layout.dots).toHaveLength(2000);
    expect(layout.lanes).toHaveLength(7);
    expect(layout.lanes[6]!.label).toBe("other (6 projects)");
    expect(new Set(layout.dots.map((dot) => dot.lane)).size).toBe(7);
  });

  it("still has one lane's height when there is nothing to show", () => {
    const layout = layoutTimeline(
      { total: 0, truncated: false, points: [], days: [] },
      { width: 600, range: "7d", now: NOW },
    );
    expect(layout.lanes).toEqual([]);
    expect(layout.height).toBeGreaterThan(0);
  });
});
