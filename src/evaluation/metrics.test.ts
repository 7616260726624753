import { describe, expect, it } from "vitest";
import {
  brier,
  correctnessOf,
  coverageAtErrorRate,
  expectedCalibrationError,
  isCorrect,
  levelError,
  negativeLogLikelihood,
  reliabilityBins,
  summariseByType,
  type Prediction,
} from "./metrics.js";

const show = (value: unknown) => JSON.stringify(value);
const choice = (probabilities: number[], gold: number[]): Prediction => ({ type: "choice", probabilities, gold });
const hard = (n: number, index: number) => Array.from({ length: n }, (_, i) => (i === index ? 1 : 0));
const noul = (p: number, gold: boolean | number): Prediction => {
  const g = typeof gold === "number" ? gold : gold ? 1 : 0;
  return { type: "noul", probabilities: [p, 1 - p], gold: [g, 1 - g] };
};

describe("accuracy", () => {
  it("compares the most likely label with the gold label", () => {
    expect(isCorrect(choice([0.2, 0.7, 0.1], hard(3, 1)))).toBe(true);
    expect(isCorrect(choice([0.2, 0.7, 0.1], hard(3, 0)))).toBe(false);
    expect(isCorrect(noul(0.8, false))).toBe(false);
  });

  it("breaks a tie in the prediction in favour of the first label in option order", () => {
    expect(isCorrect(choice([0.4, 0.4, 0.2], hard(3, 0)))).toBe(true);
    expect(isCorrect(choice([0.4, 0.4, 0.2], hard(3, 1)))).toBe(false);
    // noul's label order is true, false: 0.5 counts as "true".
    expect(isCorrect(noul(0.5, true))).toBe(true);
  });

  it("uses the most likely gold label for soft gold, and accepts any of the labels a soft gold ties on", () => {
    expect(isCorrect(choice([0.1, 0.6, 0.3], [0.2, 0.5, 0.3]))).toBe(true);
    expect(isCorrect(choice([0.1, 0.6, 0.3], [0.45, 0.1, 0.45]))).toBe(false);
    expect(isCorrect(choice([0.6, 0.1, 0.3], [0.45, 0.1, 0.45]))).toBe(true);
    expect(isCorrect(choice([0.3, 0.1, 0.6], [0.45, 0.1, 0.45])), "the last of the tied labels counts as well").toBe(true);
    expect(isCorrect(noul(0.2, 0.5)), "a 0.5 noul gold accepts false").toBe(true);
  });
});

describe("Brier score", () => {
  it("sums the squared error over every label", () => {
    expect(brier(choice([0.7, 0.2, 0.1], hard(3, 0)))).toBeCloseTo(0.09 + 0.04 + 0.01, 14);
    expect(brier(choice([0.7, 0.2, 0.1], hard(3, 2)))).toBeCloseTo(0.49 + 0.04 + 0.81, 14);
  });

  it("counts both labels for noul (0.8 vs true: 0.2² + 0.2²)", () => {
    expect(brier(noul(0.8, true))).toBeCloseTo(0.08, 14);
    expect(brier(noul(1, false))).toBeCloseTo(2, 14);
  });

  it("compares with the whole distribution for soft gold", () => {
    expect(brier(noul(0.8, 0.5))).toBeCloseTo(0.09 + 0.09, 14);
    expect(brier(choice([0.5, 0.3, 0.2], [0.5, 0.3, 0.2]))).toBe(0);
  });
});

describe("negative log-likelihood", () => {
  it("is −log p(gold) for a hard label", () => {
    expect(negativeLogLikelihood(choice([0.7, 0.2, 0.1], hard(3, 0)))).toBeCloseTo(-Math.log(0.7), 14);
    expect(negativeLogLikelihood(noul(0.25, false))).toBeCloseTo(-Math.log(0.75), 14);
  });

  it("is the cross-entropy −Σ g·log p for soft gold", () => {
    expect(negativeLogLikelihood(noul(0.8, 0.5))).toBeCloseTo(-0.5 * Math.log(0.8) - 0.5 * Math.log(0.2), 14);
  });

  it("clamps p at 1e-15, so a certain wrong answer costs 34.54 nats instead of Infinity", () => {
    const value = negativeLogLikelihood(choice([1, 0], hard(2, 1)));
    expect(value).toBeCloseTo(-Math.log(1e-15), 10);
    expect(value).toBeCloseTo(34.538776, 5);
    // A gold probability of 0 contributes nothing, even where p is 0.
    expect(negativeLogLikelihood(choice([1, 0], hard(2, 0)))).toBe(0);
  });
});

describe("expected calibration error", () => {
  // Top probabilities 0.9 (right), 0.9 (wrong), 0.6 (right), 1.0 (right):
  // bin [13/15, 14/15): 2 answers, confidence 0.9, correct 0.5 → (2/4)·0.4 = 0.2
  // bin [9/15, 10/15): 1 answer, confidence 0.6, correct 1 → (1/4)·0.4 = 0.1
  // bin [14/15, 1]: 1 answer, confidence 1, correct 1 → 0. Every other bin is empty.
  const records = [choice([0.9, 0.1], hard(2, 0)), choice([0.9, 0.1], hard(2, 1)), choice([0.4, 0.6], hard(2, 1)), choice([0, 1], hard(2, 1))];

  it("weights each bin's |correctness − confidence| by its share of answers (hand-computed 0.3)", () => {
    expect(expectedCalibrationError(records), show(reliabilityBins(records))).toBeCloseTo(0.3, 14);
  });

  it("uses 15 equal-width bins; empty bins have no means and contribute nothing; 1.0 falls in the last bin", () => {
    const bins = reliabilityBins(records);
    expect(bins).toHaveLength(15);
    expect(
      bins.map((b) => b.count),
      show(bins),
    ).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 1]);
    expect(bins[0], show(bins[0])).toEqual({ lower: 0, upper: 1 / 15, count: 0, meanConfidence: null, meanCorrectness: null });
    expect(bins[13].meanConfidence).toBeCloseTo(0.9, 14);
    expect(bins[13].meanCorrectness).toBe(0.5);
    expect(bins[14]).toMatchObject({ count: 1, meanConfidence: 1, meanCorrectness: 1 });
  });

  it("is 0 for a soft gold label the answer matches exactly (0.7 confident, 70% right)", () => {
    const r = choice([0.7, 0.3], [0.7, 0.3]);
    expect(correctnessOf(r)).toBe(0.7);
    expect(expectedCalibrationError([r])).toBeCloseTo(0, 14);
  });

  it("puts a confidence on a bin edge into the upper bin", () => {
    const bins = reliabilityBins([choice([0.6, 0.4], hard(2, 0))]);
    expect(bins[9].count, show(bins)).toBe(1);
  });
});

describe("coverage at an error rate", () => {
  // Confidences 0.95 ✓, 0.9 ✓, 0.8 ✗, 0.7 ✓, 0.6 ✗.
  const records = [
    choice([0.95, 0.05], hard(2, 0)),
    choice([0.1, 0.9], hard(2, 1)),
    choice([0.8, 0.2], hard(2, 1)),
    choice([0.7, 0.3], hard(2, 0)),
    choice([0.6, 0.4], hard(2, 1)),
  ];

  it("takes the longest most-confident prefix whose error rate stays within the budget", () => {
    const table = [0, 0.2, 0.25, 0.5].map((x) => coverageAtErrorRate(records, x));
    expect(
      table.map((c) => [c.coverage, c.threshold]),
      show(table),
    ).toEqual([
      [0.4, 0.9],
      [0.4, 0.9],
      [0.8, 0.7],
      [1, 0.6],
    ]);
    expect(table[2], show(table[2])).toMatchObject({ answers: 4, errorRate: 0.25 });
  });

  it("never splits a group of equally confident answers", () => {
    const tied = [choice([0.9, 0.1], hard(2, 0)), choice([0.9, 0.1], hard(2, 1)), choice([0.8, 0.2], hard(2, 0))];
    expect(coverageAtErrorRate(tied, 0), show(tied)).toMatchObject({ coverage: 0, answers: 0, threshold: null, errorRate: null });
    expect(coverageAtErrorRate(tied, 0.4)).toMatchObject({ coverage: 1, threshold: 0.8 });
  });

  it("counts soft gold as partly wrong (1 − gold probability of the chosen label)", () => {
    const soft = [choice([0.9, 0.1], [0.8, 0.2])];
    expect(coverageAtErrorRate(soft, 0.1).coverage).toBe(0);
    expect(coverageAtErrorRate(soft, 0.2).coverage).toBe(1);
  });

  it("is 0 with no answers", () => {
    expect(coverageAtErrorRate([], 0.1)).toMatchObject({ coverage: 0, answers: 0 });
  });
});

describe("summaries", () => {
  it("score: the mean absolute error of the expected level", () => {
    const r: Prediction = { type: "score", probabilities: [0.2, 0.3, 0.5], gold: hard(3, 2) };
    expect(levelError(r)).toBeCloseTo(0.7, 14);
  });

  it("summarises overall and per type present, with the level error only for score", () => {
    const records: Prediction[] = [choice([0.7, 0.2, 0.1], hard(3, 0)), noul(0.8, false), { type: "score", probabilities: [0.2, 0.3, 0.5], gold: hard(3, 2) }];
    const summary = summariseByType(records, [0.1]);
    expect(Object.keys(summary), show(summary)).toEqual(["overall", "choice", "noul", "score"]);
    expect(summary.overall!.answers).toBe(3);
    expect(summary.overall!.accuracy).toBeCloseTo(2 / 3, 14);
    expect(summary.overall!.brier).toBeCloseTo((0.14 + 1.28 + (0.04 + 0.09 + 0.25)) / 3, 14);
    expect(summary.overall!.nll).toBeCloseTo(-(Math.log(0.7) + Math.log(0.2) + Math.log(0.5)) / 3, 14);
    expect(summary.noul!.accuracy).toBe(0);
    expect(summary.score!.meanLevelError).toBeCloseTo(0.7, 14);
    expect(summary.overall!.meanLevelError).toBeUndefined();
    expect(summary.choice!.meanLevelError).toBeUndefined();
    expect(summariseByType([], [0.1])).toEqual({ overall: undefined });
  });
});
