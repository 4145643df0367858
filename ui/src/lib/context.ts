// Figures for the Context page: what the hooks injected and how much of it the agent used.

/** The periods offered, in days; the API takes any from 1 to 3650. */
export const CONTEXT_PERIODS = [7, 30, 90] as const;
export const DEFAULT_PERIOD = 30;

/** The period a ?days= param asks for, or the default when it is missing or not offered. */
export function periodDays(raw: string | null): number {
  const days = Number(raw);
  return CONTEXT_PERIODS.some((period) => period === days) ? days : DEFAULT_PERIOD;
}

/**
 * Used out of judged as a percentage: "–" when nothing was judged, and never "0%" or "100%"
 * unless it is exactly that (1 of 400 reads "<1%").
 */
export function shareUsed(used: number, judged: number): string {
  if (judged <= 0) return "–";
  const percent = Math.round((100 * used) / judged);
  if (percent === 0 && used > 0) return "<1%";
  if (percent === 100 && used < judged) return ">99%";
  return `${percent}%`;
}

const DAY = new Intl.DateTimeFormat("en-GB", {
  day: "numeric",
  month: "short",
  year: "numeric",
  timeZone: "UTC",
});

/** "2026-11-26" -> "26 Nov 2026": the report's days are UTC days, shown as such. */
export function formatDay(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(date.getTime()) ? day : DAY.format(date);
}

/** "1 time", "3 times" */
export function times(count: number): string {
  return count === 1 ? "1 time" : `${count} times`;
}
