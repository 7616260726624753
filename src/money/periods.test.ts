import { describe, expect, it } from "vitest";
import { monthsAfter, periodContaining } from "./periods.js";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe("allowance periods anchored on the account's start", () => {
  const anchor = at("2026-01-31T10:00:00.000Z");

  it.each([
    ["2026-01-31T10:00:00.000Z", "2026-01-31T10:00:00.000Z", "2026-02-28T10:00:00.000Z"],
    ["2026-02-28T09:59:59.999Z", "2026-01-31T10:00:00.000Z", "2026-02-28T10:00:00.000Z"],
    ["2026-02-28T10:00:00.000Z", "2026-02-28T10:00:00.000Z", "2026-03-31T10:00:00.000Z"],
    ["2026-03-15T00:00:00.000Z", "2026-02-28T10:00:00.000Z", "2026-03-31T10:00:00.000Z"],
    ["2026-04-30T10:00:00.000Z", "2026-04-30T10:00:00.000Z", "2026-05-31T10:00:00.000Z"],
    ["2027-01-31T09:00:00.000Z", "2026-12-31T10:00:00.000Z", "2027-01-31T10:00:00.000Z"],
    ["2028-02-29T10:00:00.000Z", "2028-02-29T10:00:00.000Z", "2028-03-31T10:00:00.000Z"],
  ])("at %s the period is [%s, %s)", (now, start, end) => {
    const period = periodContaining(anchor, at(now));
    expect({ start: iso(period.start), end: iso(period.end) }).toEqual({ start, end });
  });

  it("is the first period for a clock that reads before the anchor", () => {
    const period = periodContaining(anchor, anchor - 5000);
    expect(iso(period.start)).toBe(iso(anchor));
  });

  it("every instant of two years falls in exactly one period, and periods tile without gaps", () => {
    let previousEnd = anchor;
    for (let k = 0; k < 24; k++) {
      const start = monthsAfter(anchor, k);
      expect(start, `period ${k}`).toBe(previousEnd);
      const end = monthsAfter(anchor, k + 1);
      expect(periodContaining(anchor, start)).toEqual({ start, end });
      expect(periodContaining(anchor, end - 1)).toEqual({ start, end });
      previousEnd = end;
    }
  });
});
