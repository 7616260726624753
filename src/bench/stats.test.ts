import { describe, expect, it } from "vitest";
import { median, percentile, ratio, saving, summarizeLatencies, throughput } from "./stats.js";

describe("percentiles are nearest-rank: sorted[ceil(p/100 · n) − 1]", () => {
  // The textbook example: 15, 20, 35, 40, 50.
  const five = [15, 20, 35, 40, 50];

  it("picks the hand-computed ranks of five values", () => {
    expect(percentile(five, 5)).toBe(15); // ceil(0.25) = 1
    expect(percentile(five, 30)).toBe(20); // ceil(1.5) = 2
    expect(percentile(five, 40)).toBe(20); // ceil(2) = 2: exactly on a rank stays there
    expect(percentile(five, 50)).toBe(35); // ceil(2.5) = 3
    expect(percentile(five, 100)).toBe(50);
  });

  it("gives p95 and p99 of 100 values 1..100 as the 95th and 99th", () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(hundred, 95)).toBe(95);
    expect(percentile(hundred, 99)).toBe(99);
  });

  it("makes p99 of fewer than 100 requests the slowest one, never an interpolated value", () => {
    const ten = [1, 2, 3, 4, 5, 6, 7, 8, 9, 1000];
    expect(percentile(ten, 95)).toBe(1000); // ceil(9.5) = 10
    expect(percentile(ten, 90)).toBe(9); // ceil(9) = 9
  });

  it("has no percentile of nothing and rejects p outside (0, 100]", () => {
    expect(percentile([], 50)).toBeNull();
    expect(() => percentile(five, 0)).toThrow(RangeError);
    expect(() => percentile(five, 101)).toThrow(RangeError);
  });

  it("summarizes unsorted latencies without reordering the caller's list", () => {
    const latencies = [50, 15, 40, 20, 35];
    expect(summarizeLatencies(latencies)).toEqual({ p50: 35, p95: 50, p99: 50, mean: 32, min: 15, max: 50 });
    expect(latencies).toEqual([50, 15, 40, 20, 35]);
    expect(summarizeLatencies([])).toBeNull();
  });
});

describe("median", () => {
  it("is the middle value, or the mean of the middle two", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNull();
  });
});

describe("throughput is counts per wall-clock second of the phase", () => {
  it("divides answered requests, questions and input tokens by the seconds", () => {
    expect(throughput({ answered: 30, questions: 90, inputTokens: 15_000 }, 12)).toEqual({
      requestsPerSecond: 2.5,
      questionsPerSecond: 7.5,
      inputTokensPerSecond: 1250,
    });
  });

  it("refuses a phase of no time rather than dividing by zero", () => {
    expect(() => throughput({ answered: 1, questions: 1, inputTokens: 1 }, 0)).toThrow(RangeError);
  });
});

describe("ratio and saving", () => {
  it("states the service's tokens/s as a share of the ceiling", () => {
    expect(ratio(460, 500)).toBeCloseTo(0.92, 12);
    expect(ratio(460, null)).toBeNull();
    expect(ratio(460, 0)).toBeNull();
    expect(ratio(null, 500)).toBeNull();
  });

  it("says 100 ms becoming 30 ms saves 70%", () => {
    expect(saving(100, 30)).toBeCloseTo(0.7, 12);
    expect(saving(100, 150)).toBeCloseTo(-0.5, 12);
    expect(saving(null, 30)).toBeNull();
  });
});
