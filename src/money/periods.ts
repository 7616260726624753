/**
 * Allowance periods are calendar months anchored on the account's start (UTC): an account
 * started on 31 January 10:00 has periods starting 28/29 February 10:00, 31 March 10:00, …
 * They are computed from timestamps on every request, so no job ever resets usage.
 */
/** One UTC day: usage is reported per day from midnight UTC. */
export const DAY_MS = 86_400_000;

export interface Period {
  start: number;
  end: number;
}

export function periodContaining(anchor: number, now: number): Period {
  const a = new Date(anchor);
  const n = new Date(now);
  let months = (n.getUTCFullYear() - a.getUTCFullYear()) * 12 + (n.getUTCMonth() - a.getUTCMonth());
  if (months < 0) months = 0;
  if (monthsAfter(anchor, months) > now && months > 0) months -= 1;
  return { start: monthsAfter(anchor, months), end: monthsAfter(anchor, months + 1) };
}

/** The anchor moved `months` calendar months on, its day clamped to the target month's length. */
export function monthsAfter(anchor: number, months: number): number {
  const a = new Date(anchor);
  const year = a.getUTCFullYear();
  const month = a.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(year, month, Math.min(a.getUTCDate(), lastDay), a.getUTCHours(), a.getUTCMinutes(), a.getUTCSeconds(), a.getUTCMilliseconds());
}
