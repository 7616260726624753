import { describe, expect, it } from "vitest";
import { NEUTRAL_TEMPERATURES } from "../judgment/answers.js";
import { Mulberry32 } from "../gguf/prng.js";
import type { QuestionType } from "./dataset.js";
import { expectedCalibrationError } from "./metrics.js";
import { fitCalibration, fitTemperature, meanNll, predictionsAt, temperaturesOf, type LogitRecord } from "./temperature.js";

const show = (value: unknown) => JSON.stringify(value, null, 1);

/**
 * Synthetic answers whose true probabilities q are known: the gold label is drawn from q, and
 * the "model" reports logits T·log q, so softmax(logits / T) = q exactly: the temperature to
 * recover is T. T > 1 makes the model overconfident, T < 1 underconfident.
 */
function synthetic(seed: number, count: number, options: { type?: QuestionType; labels: number; temperature: number }): LogitRecord[] {
  const rng = new Mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  return Array.from({ length: count }, () => {
    const scores = Array.from({ length: options.labels }, () => 1.5 * normal());
    const max = Math.max(...scores);
    const weights = scores.map((s) => Math.exp(s - max));
    const total = weights.reduce((a, b) => a + b, 0);
    const q = weights.map((w) => w / total);
    let u = rng.next();
    let label = q.findIndex((p) => (u -= p) < 0);
    if (label < 0) label = q.length - 1;
    return {
      type: options.type ?? "choice",
      logits: q.map((p) => options.temperature * Math.log(p)),
      gold: q.map((_, i) => (i === label ? 1 : 0)),
    };
  });
}

describe("fitTemperature on synthetic data with a known temperature", () => {
  for (const truth of [2, 0.5, 1]) {
    it(`recovers T = ${truth} within 10% and the held-out ECE does not get worse (drops unless T = 1)`, () => {
      const train = synthetic(1, 4000, { labels: 3, temperature: truth });
      const heldOut = synthetic(2, 4000, { labels: 3, temperature: truth });
      const fit = fitTemperature(train);
      expect(fit.temperature / truth, show(fit)).toBeGreaterThan(0.9);
      expect(fit.temperature / truth, show(fit)).toBeLessThan(1.1);
      expect(fit.nllAfter, show(fit)).toBeLessThanOrEqual(fit.nllBefore);
      expect(fit.atBound).toBe(false);

      const before = expectedCalibrationError(predictionsAt(heldOut, NEUTRAL_TEMPERATURES));
      const after = expectedCalibrationError(predictionsAt(heldOut, { ...NEUTRAL_TEMPERATURES, choice: fit.temperature }));
      const context = show({ truth, fitted: fit.temperature, before, after });
      expect(after, context).toBeLessThan(0.03);
      if (truth !== 1) expect(after, context).toBeLessThan(before / 2);
    });
  }

  it("finds the minimum of the NLL: nudging T either way only raises it", () => {
    const records = synthetic(3, 500, { labels: 4, temperature: 1.7 });
    const { temperature } = fitTemperature(records);
    const at = (t: number) => meanNll(records, t);
    expect(at(temperature * 1.01)).toBeGreaterThan(at(temperature));
    expect(at(temperature / 1.01)).toBeGreaterThan(at(temperature));
  });

  it("keeps T = 1 when the answers carry no signal (every label equally likely)", () => {
    const flat: LogitRecord[] = [
      { type: "noul", logits: [-1, -1], gold: [1, 0] },
      { type: "noul", logits: [-2, -2], gold: [0, 1] },
    ];
    expect(fitTemperature(flat)).toMatchObject({ temperature: 1, atBound: false });
  });

  it("stops at the lower bound and says so when every answer is right (sharper is always better)", () => {
    const separable: LogitRecord[] = [
      { type: "noul", logits: [-0.1, -2.4], gold: [1, 0] },
      { type: "noul", logits: [-3, -0.05], gold: [0, 1] },
    ];
    const fit = fitTemperature(separable);
    expect(fit.atBound, show(fit)).toBe(true);
    expect(fit.temperature, show(fit)).toBeLessThan(0.011);
  });

  it("handles a label with log-probability −Infinity", () => {
    const records: LogitRecord[] = [...synthetic(4, 200, { labels: 2, temperature: 2 }), { type: "choice", logits: [-Infinity, 0], gold: [0, 1] }];
    const fit = fitTemperature(records);
    expect(Number.isFinite(fit.temperature) && Number.isFinite(fit.nllAfter), show(fit)).toBe(true);
  });
});

describe("fitCalibration", () => {
  it("fits each type on its own answers and recovers a different temperature per label-count bucket", () => {
    const records = [
      ...synthetic(5, 3000, { labels: 2, temperature: 2.5 }),
      ...synthetic(6, 3000, { labels: 5, temperature: 0.8 }),
      ...synthetic(7, 3000, { type: "noul", labels: 2, temperature: 1.5 }),
      ...synthetic(8, 10, { type: "score", labels: 3, temperature: 1 }),
    ];
    const fit = fitCalibration(records, 50);
    const context = show(fit);
    expect(fit.types.noul!.temperature / 1.5, context).toBeCloseTo(1, 1);
    expect(
      fit.buckets.choice!.map((b) => [b.min, b.max]),
      context,
    ).toEqual([
      [2, 2],
      [5, 6],
    ]);
    expect(fit.buckets.choice![0].temperature / 2.5, context).toBeCloseTo(1, 1);
    expect(fit.buckets.choice![1].temperature / 0.8, context).toBeCloseTo(1, 1);
    // One pooled temperature lies between the two buckets' and fits the pooled data worse.
    expect(fit.types.choice!.temperature, context).toBeGreaterThan(0.8);
    expect(fit.types.choice!.temperature, context).toBeLessThan(2.5);
    // 10 score answers in one bucket: a type temperature, no bucket.
    expect(fit.buckets.score, context).toBeUndefined();

    const choices = records.filter((r) => r.type === "choice");
    const pooled = predictionsAt(choices, { ...NEUTRAL_TEMPERATURES, choice: fit.types.choice!.temperature });
    const bucketed = predictionsAt(choices, temperaturesOf(fit));
    expect(expectedCalibrationError(bucketed), context).toBeLessThan(expectedCalibrationError(pooled));
  });

  it("leaves out buckets with too few answers, and a bucket that holds every answer of its type", () => {
    const fit = fitCalibration([...synthetic(9, 100, { labels: 3, temperature: 2 }), ...synthetic(10, 20, { labels: 4, temperature: 2 })], 50);
    expect(
      fit.buckets.choice?.map((b) => b.min),
      show(fit.buckets),
    ).toEqual([3]);
    const single = fitCalibration(synthetic(11, 100, { labels: 3, temperature: 2 }), 50);
    expect(single.buckets, show(single.buckets)).toEqual({});
  });

  it("temperaturesOf keeps the base temperatures of types the fit has no data for", () => {
    const fit = fitCalibration(synthetic(12, 200, { type: "noul", labels: 2, temperature: 2 }), 50);
    const base = { choice: 1.3, noul: 9, score: 0.7, buckets: { score: [{ min: 2, max: 3, temperature: 0.6 }] } };
    const merged = temperaturesOf(fit, base);
    expect(merged, show(merged)).toEqual({ choice: 1.3, noul: fit.types.noul!.temperature, score: 0.7, buckets: base.buckets });
  });
});
