// Pure formatting helpers for figures, sizes and times.

const BYTE_UNITS = ["B", "KB", "MB", "GB", "TB"];

/** 1536 -> "1.5 KB"; binary steps (1024), one decimal below 10 of a unit. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "–";
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 10 ? 0 : 1;
  return `${value.toFixed(digits)} ${BYTE_UNITS[unit]}`;
}

const COUNT = new Intl.NumberFormat("en-US");

export function formatCount(value: number): string {
  return COUNT.format(value);
}

/** Milliseconds as "12 ms", or "0.4 ms" below one. */
export function formatMs(ms: number): string {
  return ms < 1 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

const DATE = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric" });
const DATE_TIME = new Intl.DateTimeFormat("en-GB", {
  day: "numeric",
  month: "short",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
});

function parse(iso: string): Date | null {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** "14 Apr 2026" */
export function formatDate(iso: string | null | undefined): string {
  const date = iso ? parse(iso) : null;
  return date ? DATE.format(date) : "–";
}

/** "14 Apr 2026, 09:12" in the browser's time zone. */
export function formatDateTime(iso: string | null | undefined): string {
  const date = iso ? parse(iso) : null;
  return date ? DATE_TIME.format(date) : "–";
}

/** "3 days ago", "in 2 hours", "just now" relative to `now`. */
export function relativeTime(iso: string, now: Date = new Date()): string {
  const date = parse(iso);
  if (!date) return "–";
  const seconds = Math.round((date.getTime() - now.getTime()) / 1000);
  const steps: [Intl.RelativeTimeFormatUnit, number][] = [
    ["year", 365 * 86400],
    ["month", 30 * 86400],
    ["week", 7 * 86400],
    ["day", 86400],
    ["hour", 3600],
    ["minute", 60],
  ];
  const format = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
  for (const [unit, size] of steps) {
    if (Math.abs(seconds) >= size) return format.format(Math.trunc(seconds / size), unit);
  }
  return "just now";
}

/** Score-like numbers: three significant decimals, small fused scores kept readable. */
export function formatScore(value: number): string {
  if (value !== 0 && Math.abs(value) < 0.01) return value.toExponential(1);
  return value.toFixed(3);
}

/** The first line of a text, cut to `limit` characters with an ellipsis. */
export function firstLine(text: string, limit = 100): string {
  const line = text.trim().split("\n", 1)[0]?.trim() ?? "";
  return line.length <= limit ? line : `${line.slice(0, limit - 1).trimEnd()}…`;
}
