import { expect, it } from "vitest";
import { lessOrMore } from "./format-report.js";

it('says how much less time a repeated state takes, or how much more when it is slower (never a negative "less")', () => {
  expect(lessOrMore(0.75)).toBe("75% less");
  expect(lessOrMore(0)).toBe("0% less");
  expect(lessOrMore(-1.32)).toBe("132% more");
  expect(lessOrMore(null)).toBe("-");
});
