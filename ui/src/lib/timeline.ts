// The Timeline River's geometry, as pure functions: lanes (the busiest projects, the rest
// folded into "other"), the x scale, dots sized by length, a smoothed river per lane from the
// per-day counts, and axis ticks. The component only draws what this returns.

import type { Timeline, TimelineDay, TimelinePoint } from "../types";

export const DAY_MS = 86_400_000;
export const MAX_PROJECT_LANES = 6;
/** The lane key of folded projects; a NUL can't start a project name, so it can't collide. */
export const OTHER_LANE = "\u0000other";

export type RangeKey = "7d" | "30d" | "90d" | "all";
export const RANGES: { key: RangeKey; label: string; days: number | null }[] = [
  { key: "7d", label: "7 days", days: 7 },
  { key: "30d", label: "30 days", days: 30 },
  { key: "90d", label: "90 days", days: 90 },
  { key: "all", label: "All", days: null },
];

export function isRangeKey(value: string | null): value is RangeKey {
  return RANGES.some((range) => range.key === value);
}

export type Lanes = {
  /** Lane keys, busiest first; OTHER_LANE last when some projects were folded. */
  keys: string[];
  /** The projects behind each lane key. */
  members: Map<string, string[]>;
  /** project -> lane key */
  laneOf: Map<string, string>;
  /** memories per lane, from the day counts (they cover every match, not just the points). */
  totals: Map<string, number>;
};

/** Give the `max` busiest projects a lane each and fold the rest into one "other" lane. */
export function assignLanes(
  days: TimelineDay[],
  points: TimelinePoint[],
  max = MAX_PROJECT_LANES,
): Lanes {
  const totals = new Map<string, number>();
  for (const day of days) totals.set(day.project, (totals.get(day.project) ?? 0) + day.count);
  // Day rows can be cut off (the server keeps the newest 5,000): count such projects' points.
  const inDays = new Set(days.map((day) => day.project));
  for (const point of points) {
    if (!inDays.has(point.project)) totals.set(point.project, (totals.get(point.project) ?? 0) + 1);
  }
  const ranked = [...totals.keys()].sort(
    (a, b) => (totals.get(b) ?? 0) - (totals.get(a) ?? 0) || a.localeCompare(b),
  );
  const kept = ranked.length > max ? ranked.slice(0, max) : ranked;
  const folded = ranked.slice(kept.length);
  const keys = folded.length ? [...kept, OTHER_LANE] : kept;
  const members = new Map<string, string[]>(kept.map((project) => [project, [project]]));
  const laneOf = new Map<string, string>(kept.map((project) => [project, project]));
  const laneTotals = new Map<string, number>(kept.map((p) => [p, totals.get(p) ?? 0]));
  if (folded.length) {
    members.set(OTHER_LANE, folded);
    for (const project of folded) laneOf.set(project, OTHER_LANE);
    laneTotals.set(
      OTHER_LANE,
      folded.reduce((sum, project) => sum + (totals.get(project) ?? 0), 0),
    );
  }
  return { keys, members, laneOf, totals: laneTotals };
}

export function laneLabel(key: string, lanes: Lanes): string {
  if (key !== OTHER_LANE) return key || "(no project)";
  const count = lanes.members.get(OTHER_LANE)?.length ?? 0;
  return `other (${count} project${count === 1 ? "" : "s"})`;
}

/** The time window shown: the fixed range ending now, or for "all" the span of the data. */
export function timeDomain(timeline: Timeline, range: RangeKey, now: number): [number, number] {
  const days = RANGES.find((r) => r.key === range)?.days ?? null;
  if (days !== null) return [now - days * DAY_MS, now];
  let start = Infinity;
  let end = -Infinity;
  for (const day of timeline.days) {
    const t = Date.parse(`${day.day}T00:00:00Z`);
    if (Number.isNaN(t)) continue;
    start = Math.min(start, t);
    end = Math.max(end, t + DAY_MS);
  }
  for (const point of timeline.points) {
    const t = Date.parse(point.created_at);
    if (Number.isNaN(t)) continue;
    start = Math.min(start, t);
    end = Math.max(end, t);
  }
  if (!Number.isFinite(start)) return [now - 30 * DAY_MS, now];
  const pad = Math.max((end - start) * 0.02, DAY_MS / 2);
  return [start - pad, end + pad];
}

/** Dot radius in px: 2.5 for a one-liner up to 8 for 4,000+ characters (area ~ length). */
export function dotRadius(length: number): number {
  const share = Math.min(Math.max(length, 0), 4000) / 4000;
  return 2.5 + 5.5 * Math.sqrt(share);
}

/** A stable spread in [-0.5, 0.5) from an id, so dots of one day don't sit on one line. */
export function jitter(id: number): number {
  let h = (id ^ 0x9e3779b9) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return (h % 10_000) / 10_000 - 0.5;
}

const KNOWN_KINDS = new Set([
  "raw",
  "distilled",
  "note",
  "preference",
  "pattern",
  "behavior",
  "manual",
  "trajectory",
]);

export function kindClass(kind: string): string {
  return KNOWN_KINDS.has(kind) ? `kind-${kind}` : "kind-other";
}

type XY = [number, number];

/** A smooth path through `points`: quadratic curves through the midpoints, no overshoot. */
export function smoothLine(points: XY[], move = true): string {
  if (points.length === 0) return "";
  const [first, ...rest] = points;
  const f = (n: number) => (Math.round(n * 10) / 10).toString();
  let path = `${move ? "M" : "L"}${f(first![0])},${f(first![1])}`;
  if (rest.length === 0) return path;
  for (let i = 0; i < rest.length - 1; i++) {
    const [cx, cy] = rest[i]!;
    const [nx, ny] = rest[i + 1]!;
    path += `Q${f(cx)},${f(cy)} ${f((cx + nx) / 2)},${f((cy + ny) / 2)}`;
  }
  const last = rest[rest.length - 1]!;
  path += `L${f(last[0])},${f(last[1])}`;
  return path;
}

/**
 * Runs of consecutive buckets (of days since the epoch) with their counts, each padded with a
 * zero bucket on both sides, so the river closes between busy stretches instead of tapering
 * across the gap.
 */
export function dayRuns(counts: Map<number, number>): [number, number][][] {
  const days = [...counts.keys()].sort((a, b) => a - b);
  const runs: [number, number][][] = [];
  let run: [number, number][] = [];
  for (const day of days) {
    const previous = run[run.length - 1];
    if (previous && previous[0] !== day - 1) {
      run.push([previous[0] + 1, 0]);
      runs.push(run);
      run = [];
    }
    if (run.length === 0) run.push([day - 1, 0]);
    run.push([day, counts.get(day) ?? 0]);
  }
  const last = run[run.length - 1];
  if (last) {
    run.push([last[0] + 1, 0]);
    runs.push(run);
  }
  return runs;
}

export type LaneLayout = {
  key: string;
  label: string;
  total: number;
  top: number;
  center: number;
  height: number;
  /** Closed areas, one per run of busy days. */
  river: string;
  /** The thin line joining the lane's first and last busy day. */
  bed: { x1: number; x2: number } | null;
};

export type DotLayout = {
  id: number;
  x: number;
  y: number;
  r: number;
  kind: string;
  project: string;
  createdAt: string;
  title: string;
  lane: string;
};

export type Tick = { x: number; label: string };

export type TimelineLayout = {
  width: number;
  height: number;
  lanes: LaneLayout[];
  /** Oldest first, which is also the keyboard order. */
  dots: DotLayout[];
  ticks: Tick[];
  domain: [number, number];
};

export type LayoutOptions = {
  width: number;
  range: RangeKey;
  now: number;
  laneHeight?: number;
  maxLanes?: number;
};

export const AXIS_HEIGHT = 26;
const RIVER_BUCKET_PX = 8;
const SIDE = 14;

export function layoutTimeline(timeline: Timeline, options: LayoutOptions): TimelineLayout {
  const width = Math.max(options.width, 200);
  const laneHeight = options.laneHeight ?? 68;
  const lanes = assignLanes(timeline.days, timeline.points, options.maxLanes);
  const domain = timeDomain(timeline, options.range, options.now);
  const [start, end] = domain;
  const span = Math.max(end - start, 1);
  const left = SIDE;
  const right = width - SIDE;
  const x = (t: number) => left + ((t - start) / span) * (right - left);
  const clampX = (value: number) => Math.min(right, Math.max(left, value));

  // The river counts per bucket of days, about 8 px wide, so a year-long view still flows.
  const bucketDays = Math.max(
    1,
    Math.ceil(span / DAY_MS / Math.max((right - left) / RIVER_BUCKET_PX, 1)),
  );
  const bucketCounts = new Map<string, Map<number, number>>();
  for (const day of timeline.days) {
    const lane = lanes.laneOf.get(day.project);
    const t = Date.parse(`${day.day}T00:00:00Z`);
    if (lane === undefined || Number.isNaN(t)) continue;
    const bucket = Math.floor(Math.floor(t / DAY_MS) / bucketDays);
    const counts = bucketCounts.get(lane) ?? new Map<number, number>();
    counts.set(bucket, (counts.get(bucket) ?? 0) + day.count);
    bucketCounts.set(lane, counts);
  }
  let busiest = 1;
  for (const counts of bucketCounts.values()) {
    for (const count of counts.values()) busiest = Math.max(busiest, count);
  }

  const laneLayouts: LaneLayout[] = lanes.keys.map((key, index) => {
    const top = AXIS_HEIGHT + index * laneHeight;
    const center = top + laneHeight / 2;
    const maxThickness = laneHeight * 0.62;
    const middle = (bucket: number) => (bucket + 0.5) * bucketDays * DAY_MS;
    const toX = (bucket: number) => clampX(x(middle(bucket)));
    const visible = (bucket: number) => {
      const t = middle(bucket);
      return t >= start - bucketDays * DAY_MS && t <= end + bucketDays * DAY_MS;
    };
    const runs = dayRuns(bucketCounts.get(key) ?? new Map()).filter((run) =>
      run.some(([bucket]) => visible(bucket)),
    );
    const river = runs
      .map((run) => {
        const edge = run.map(([day, count]): XY => {
          const thickness = count === 0 ? 0 : 2 + (maxThickness - 2) * Math.sqrt(count / busiest);
          return [toX(day), thickness / 2];
        });
        const upper = edge.map(([px, half]): XY => [px, center - half]);
        const lower = edge.map(([px, half]): XY => [px, center + half]).reverse();
        return `${smoothLine(upper)}${smoothLine(lower, false)}Z`;
      })
      .join("");
    const firstRun = runs[0];
    const lastRun = runs[runs.length - 1];
    const bed =
      firstRun && lastRun
        ? { x1: toX(firstRun[1]![0]), x2: toX(lastRun[lastRun.length - 2]![0]) }
        : null;
    return {
      key,
      label: laneLabel(key, lanes),
      total: lanes.totals.get(key) ?? 0,
      top,
      center,
      height: laneHeight,
      river,
      bed,
    };
  });
  const laneByKey = new Map(laneLayouts.map((lane) => [lane.key, lane]));

  const dots: DotLayout[] = [];
  for (const point of timeline.points) {
    const t = Date.parse(point.created_at);
    const laneKey = lanes.laneOf.get(point.project);
    const lane = laneKey === undefined ? undefined : laneByKey.get(laneKey);
    if (!lane || Number.isNaN(t)) continue;
    dots.push({
      id: point.id,
      x: clampX(x(t)),
      y: lane.center + jitter(point.id) * laneHeight * 0.5,
      r: dotRadius(point.length),
      kind: point.kind,
      project: point.project,
      createdAt: point.created_at,
      title: point.title,
      lane: lane.key,
    });
  }
  dots.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id - b.id);

  const height = AXIS_HEIGHT + Math.max(laneLayouts.length, 1) * laneHeight + 8;
  return {
    width,
    height,
    lanes: laneLayouts,
    dots,
    ticks: axisTicks(domain, left, right),
    domain,
  };
}

const DAY_STEPS = [1, 2, 7, 14];
const MONTH_STEPS = [1, 2, 3, 6, 12, 24, 60];
const DAY_LABEL = new Intl.DateTimeFormat("en-GB", {
  day: "numeric",
  month: "short",
  timeZone: "UTC",
});
const MONTH_LABEL = new Intl.DateTimeFormat("en-GB", {
  month: "short",
  year: "numeric",
  timeZone: "UTC",
});

/** Axis ticks at whole days (short spans) or month starts, about one per 110 px. */
export function axisTicks(domain: [number, number], left: number, right: number): Tick[] {
  const [start, end] = domain;
  const span = Math.max(end - start, 1);
  const wanted = Math.max(2, Math.floor((right - left) / 110));
  const x = (t: number) => left + ((t - start) / span) * (right - left);
  const spanDays = span / DAY_MS;
  const ticks: Tick[] = [];
  const dayStep = DAY_STEPS.find((step) => spanDays / step <= wanted);
  if (dayStep !== undefined) {
    const first = Math.ceil(start / (dayStep * DAY_MS)) * dayStep * DAY_MS;
    for (let t = first; t <= end; t += dayStep * DAY_MS) {
      ticks.push({ x: x(t), label: DAY_LABEL.format(t) });
    }
    return ticks;
  }
  const spanMonths = spanDays / 30.44;
  const monthStep = MONTH_STEPS.find((step) => spanMonths / step <= wanted) ?? 120;
  const from = new Date(start);
  const firstMonth = from.getUTCFullYear() * 12 + from.getUTCMonth();
  for (let month = Math.ceil(firstMonth / monthStep) * monthStep; ; month += monthStep) {
    const t = Date.UTC(Math.floor(month / 12), month % 12, 1);
    if (t > end) break;
    if (t >= start) ticks.push({ x: x(t), label: MONTH_LABEL.format(t) });
  }
  return ticks;
}
