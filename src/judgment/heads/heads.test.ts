import { describe, expect, it } from "vitest";
import { applyHead, confidence } from "./index.js";
import { applyLevel1, fitLevel1 } from "./level1.js";
import { applyLevel2, chooseL2, fitLevel2 } from "./level2.js";
import { metricsOf } from "./metrics.js";
import { softmax } from "./optimise.js";
import { gaussian, syntheticRows } from "./test-helpers.js";
import { seededRandom } from "./random.js";
import { prepareRows } from "./rows.js";
import type { LabelledRow } from "./types.js";

/** Draws a class from a distribution. */
const draw = (p: readonly number[], u: number) => {
  let c = 0;
  for (let acc = p[0]; u > acc && c < p.length - 1; acc += p[++c]);
  return c;
};

/** Rows whose gold is drawn from softmax(scale·logp + bias) over a random readout: level 1's own model. */
function readoutRows(n: number, scale: number[], bias: number[], seed: number): LabelledRow[] {
  const random = seededRandom(seed);
  const normal = gaussian(random);
  return Array.from({ length: n }, () => {
    const logProbs = Array.from(softmax(scale.map(() => normal() * 1.5)), Math.log);
    const truth = softmax(logProbs.map((l, c) => scale[c] * l + bias[c]));
    return { logProbs, gold: draw(truth, random()) };
  });
}

describe("level 1", () => {
  it("recovers a known per-class scale and bias", () => {
    const scale = [2, 0.5, 1.5];
    const bias = [0.5, -0.3, -0.2];
    const head = fitLevel1(prepareRows(readoutRows(4000, scale, bias, 1)).rows, 3);
    head.scale.forEach((s, c) => expect(s, `scale ${c}: ${head.scale}`).toBeCloseTo(scale[c], 0));
    const mean = head.bias.reduce((a, b) => a + b, 0) / 3;
    head.bias.forEach((b, c) => expect(Math.abs(b - mean - bias[c]), `bias ${c}: ${head.bias}`).toBeLessThan(0.15));
  });

  it("is attached to classes, not positions: permuting the classes permutes the head", () => {
    const rows = prepareRows(readoutRows(300, [2, 0.5, 1.5], [0.5, -0.3, -0.2], 2)).rows;
    const order = [2, 0, 1];
    const permuted = rows.map((row) => ({
      ...row,
      logProbs: Float64Array.from(order, (c) => row.logProbs[c]),
      gold: Float64Array.from(order, (c) => row.gold[c]),
    }));
    const head = fitLevel1(rows, 3);
    const other = fitLevel1(permuted, 3);
    order.forEach((c, i) => {
      expect(other.scale[i]).toBeCloseTo(head.scale[c], 6);
      expect(other.bias[i]).toBeCloseTo(head.bias[c], 6);
    });
  });

  it("fits a soft gold by cross-entropy: the same input with gold [0.7, 0.3] predicts about [0.7, 0.3]", () => {
    const rows = prepareRows(Array.from({ length: 40 }, () => ({ logProbs: [Math.log(0.5), Math.log(0.5)], gold: [0.7, 0.3] }))).rows;
    const p = applyLevel1(fitLevel1(rows, 2), rows[0].logProbs);
    expect(p[0]).toBeCloseTo(0.7, 2);
  });
});

describe("level 2", () => {
  it("recovers a linearly separable problem, K = 2 and K = 5", () => {
    for (const classes of [2, 5]) {
      const rows = prepareRows(syntheticRows({ n: 60 * classes + 400, d: 24, classes, seed: classes, separation: 8, factors: 2 })).rows;
      const train = rows.slice(0, 60 * classes);
      const test = rows.slice(60 * classes);
      const head = fitLevel2(train, classes, 1);
      expect(head.weights.length).toBe(classes);
      const m = metricsOf(
        test.map((row) => applyLevel2(head, row.features!)),
        test.map((row) => row.gold),
      );
      expect(m.accuracy, `K=${classes} ${JSON.stringify(m)}`).toBeGreaterThan(0.97);
      expect(m.nll).toBeLessThan(0.15);
    }
  });

  it("gives classes absent from the training rows zero weights and a small probability", () => {
    const rows = prepareRows(
      syntheticRows({ n: 90, d: 8, classes: 3, seed: 4, separation: 6 }).map((row) => ({ ...row, logProbs: [...row.logProbs, -3], gold: row.gold as number })),
    ).rows;
    const head = fitLevel2(rows, 4, 3);
    expect(head.weights[3].every((w) => w === 0)).toBe(true);
    expect(applyLevel2(head, rows[0].features!)[3]).toBeLessThan(1e-3);
  });

  it("one-standard-error rule: the strongest λ within one SE of the best mean", () => {
    const grid = [100, 10, 1];
    // Means 0.57, 0.50, 0.49; the best has SE 0.05, so the bound 0.54 takes in 10 but not 100.
    expect(
      chooseL2(grid, [
        [0.52, 0.62],
        [0.5, 0.5],
        [0.44, 0.54],
      ]),
    ).toBe(10);
    expect(
      chooseL2(grid, [
        [0.9, 0.9],
        [0.8, 0.8],
        [0.5, 0.5],
      ]),
    ).toBe(1);
  });
});

describe("applyHead and confidence", () => {
  it("plain reads -Infinity as (all but) zero; confidence is the top probability", () => {
    const p = applyHead({ kind: "plain" }, [Math.log(0.75), Math.log(0.25), Number.NEGATIVE_INFINITY]);
    expect(p[0]).toBeCloseTo(0.75, 12);
    expect(p[2]).toBeLessThan(1e-20);
    expect(confidence(p)).toBeCloseTo(0.75, 12);
    expect(() => applyHead({ kind: "level2", mean: [0], std: [1], weights: [[1], [-1]], bias: [0, 0], l2: 1 }, [0, 0])).toThrow(/needs the hidden-state/);
  });
});
