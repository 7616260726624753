/**
 * An instant as people write it for an expiry: a date (`2026-12-31`, midnight UTC) or an ISO 8601
 * date-time with its offset (`2026-12-31T18:00:00Z`, `…+02:00`). A date-time without an offset is
 * refused rather than read in some machine's time zone. Undefined when it is none of these.
 */
export function parseInstant(text: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2}))?$/.exec(text.trim());
  if (!match) return undefined;
  const [, y, mo, d, h = "00", mi = "00", s = "00", , zone = "Z"] = match;
  const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${match[7] ? `.${match[7].padEnd(3, "0")}` : ""}${zone}`);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2026-02-30 over to March: only a date that exists is accepted.
  const back = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (back.getUTCMonth() !== Number(mo) - 1 || back.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  return ms;
}

export const INSTANT_FORMAT = "a date (2026-12-31, midnight UTC) or an ISO 8601 date-time with its offset (2026-12-31T18:00:00Z)";
