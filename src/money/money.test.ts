import { describe, expect, it } from "vitest";
import { allowanceUnits, chargeFor, formatEuros, parseEuros, percentUsed } from "./money.js";

describe("euro amounts", () => {
  it.each([
    ["12.5", 12_500_000],
    ["0.000001", 1],
    ["3", 3_000_000],
    [" 7.25 ", 7_250_000],
    ["0", 0],
    ["9999999999.999999", undefined], // above 2^53 micro-euros
  ])("parse %j as %j micro-euros", (text, micros) => {
    expect(parseEuros(text)).toBe(micros);
  });

  it.each(["-1", "1e3", "1.0000001", "", ".5", "1.", "abc", "1,50", "0x10", "NaN", "Infinity"])("refuse %j", (text) =>
    expect(parseEuros(text)).toBeUndefined(),
  );

  it.each([
    [0, "0.00"],
    [4_990_000, "4.99"],
    [12_345_678, "12.345678"],
    [1, "0.000001"],
    [10, "0.00001"],
    [1_000_000, "1.00"],
    [1_100_000, "1.10"],
    [Number.MAX_SAFE_INTEGER, "9007199254.740991"],
  ])("format %d µ€ as %s €", (micros, text) => {
    expect(formatEuros(micros)).toBe(text);
    expect(parseEuros(text)).toBe(micros);
  });

  it("refuses to format a fraction of a micro-euro", () => {
    expect(() => formatEuros(0.5)).toThrow(RangeError);
  });
});

describe("the charge for a request", () => {
  it.each([
    [1_000_000, 50_000, 50_000],
    [281, 42_000, 12], // 11.802 µ€ rounds up
    [1000, 42_000, 42], // exact
    [1, 1, 1], // a millionth of a micro-euro still costs one
    [0, 42_000, 0],
    [12345, 0, 0],
    [16_384, 1_000_000_000_000, 16_384_000_000], // beyond 2^53 before the division
  ])("%d tokens at %d µ€ per million cost %d µ€", (tokens, price, micros) => {
    expect(chargeFor(tokens, price)).toBe(micros);
  });
});

describe("percent of the allowance used", () => {
  it.each([
    [0, 1000, 0],
    [9, 1000, 0],
    [10, 1000, 1],
    [999, 1000, 99],
    [1000, 1000, 100],
    [1, 3, 33],
    [0, 0, 100],
  ])("%d of %d is %d%%", (used, allowance, percent) => {
    expect(percentUsed(used, allowance)).toBe(percent);
  });
});

describe("a model's price multiplier (docs/engines/many-models.md)", () => {
  it.each([
    [7, 1_000_000, 250, 2], // 7 × 1 × 0.25 = 1.75 µ€, up to 2
    [7, 1_000_000, 3000, 21],
    [1, 1, 1000, 1], // a millionth of a µ€ still costs one
    [1_000_000, 50_000, 1500, 75_000],
    [0, 50_000, 3000, 0],
  ])("%i tokens at %i µ€/M × %i/1000 cost %i µ€: one rounding up, of the exact product", (tokens, price, milli, micros) => {
    expect(chargeFor(tokens, price, milli)).toBe(micros);
  });

  it("rounds once, not per factor: 3 tokens at 0.4 µ€ each × 2.5 is exactly 3 µ€", () => {
    expect(chargeFor(3, 400_000, 2500)).toBe(3);
  });

  it.each([
    [2, 3000, 6],
    [2, 250, 1],
    [5, 250, 2],
    [1, 1500, 2],
    [3, 1000, 3],
  ])("%i questions on a ×%i/1000 model count %i of the allowance (rounded up to a whole question)", (questions, milli, units) => {
    expect(allowanceUnits(questions, milli)).toBe(units);
  });
});
