import { sql, type RawBuilder } from "kysely";
import { DAY_MS } from "../money/periods.js";

/**
 * Rows grouped by UTC day inside a range, in SQL: the day index counted from the range's first
 * midnight (select it as the first column, then group and order by position 1: PostgreSQL would
 * not see two parameterised copies of the expression as one), and that index back to a timestamp.
 */
export function dayBuckets(rangeStart: number, column = "at"): { day: RawBuilder<number>; dayStart: (day: number) => number } {
  const midnight = Math.floor(rangeStart / DAY_MS) * DAY_MS;
  return {
    // CAST: SQLite may bind the numbers as reals; the division must still truncate to a day.
    day: sql<number>`CAST((${sql.ref(column)} - ${midnight}) / ${DAY_MS} AS BIGINT)`,
    dayStart: (day) => midnight + day * DAY_MS,
  };
}
