import { describe, expect, it } from "vitest";
import { parseConcurrencyList, parseDuration, parseInteger } from "./options.js";

describe("bench option values", () => {
  it("reads durations in ms, s, m, h, bare numbers as seconds", () => {
    expect(parseDuration("500ms")).toBe(500);
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration("1.5")).toBe(1500);
    expect(parseDuration("2m")).toBe(120_000);
    expect(parseDuration("1h")).toBe(3_600_000);
    for (const bad of ["", "s", "0s", "-1s", "10 minutes", "1e3"]) expect(() => parseDuration(bad), bad).toThrow(RangeError);
  });

  it("reads a concurrency list as one phase per value, in order", () => {
    expect(parseConcurrencyList("1,4")).toEqual([1, 4]);
    expect(parseConcurrencyList("16, 64 ,1")).toEqual([16, 64, 1]);
    for (const bad of ["", "1,,4", "0", "1.5", "a", "1,4,"]) expect(() => parseConcurrencyList(bad), bad).toThrow(RangeError);
  });

  it("reads integers within bounds only", () => {
    expect(parseInteger("7", 1)).toBe(7);
    expect(() => parseInteger("0", 1)).toThrow(/from 1 up/);
    expect(() => parseInteger("256", 2, 255)).toThrow(/from 2 to 255/);
    expect(() => parseInteger("3.0", 1)).toThrow(RangeError);
  });
});
