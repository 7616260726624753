import { describe, expect, it } from "vitest";
import { chargeFor, formatEuros, parseEuros, percentUsed } from "./money.js";

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

  it.each(["-1", "1e3", "1.0000001", "", ".5", "1.", "abc", "1,50", "0x10", "NaN", "Infinity"])(
    "refuse %j",
    (text) => expect(parseEuros(text)).toBeUndefined(),
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
