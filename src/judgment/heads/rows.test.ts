import { describe, expect, it } from "vitest";
import { deriveSeed, hashNumbers, seededRandom, shuffleInPlace } from "./random.js";
import { assignFolds, clipLogProbs, foldCount, LOG_PROB_FLOOR, prepareRows } from "./rows.js";
import type { LabelledRow } from "./types.js";

describe("seeded randomness", () => {
  it("repeats for a seed and differs between seeds", () => {
    const draw = (seed: number) => Array.from({ length: 5 }, seededRandom(seed));
    expect(draw(1)).toEqual(draw(1));
    expect(draw(1)).not.toEqual(draw(2));
    expect(deriveSeed(1, 2)).not.toBe(deriveSeed(1, 3));
  });

  it("hashes values, not their container: a Float32Array and a number[] of the same values agree", () => {
    const values = [0.5, -1.25, 3];
    expect(hashNumbers([Float32Array.from(values)])).toBe(hashNumbers([values]));
    expect(hashNumbers([[1], [2, 3]])).not.toBe(hashNumbers([[1, 2], [3]]));
    expect(hashNumbers([[-0]])).toBe(hashNumbers([[0]]));
  });
});

describe("rows", () => {
  const rows: LabelledRow[] = [
    { logProbs: [Math.log(0.7), Math.log(0.3)], gold: 0, features: [1, 2] },
    { logProbs: [Math.log(0.2), Math.log(0.8)], gold: [0.25, 0.75], features: [3, 4] },
    { logProbs: [Number.NEGATIVE_INFINITY, 0], gold: 1, features: [5, 6] },
  ];

  it("puts rows in one order whatever order they come in", () => {
    const once = prepareRows(rows).rows;
    const reversed = prepareRows([...rows].reverse()).rows;
    expect(reversed).toEqual(once);
    expect(shuffleInPlace([...rows], seededRandom(3)).length).toBe(3);
  });

  it("reads -Infinity as the floor, keeps soft gold as a distribution and labels by its argmax", () => {
    expect(Array.from(clipLogProbs([Number.NEGATIVE_INFINITY, -1000, -2]))).toEqual([LOG_PROB_FLOOR, LOG_PROB_FLOOR, -2]);
    const prepared = prepareRows(rows).rows;
    const soft = prepared.find((row) => row.gold[0] === 0.25)!;
    expect(soft.label).toBe(1);
    expect(prepared.every((row) => row.features instanceof Float64Array)).toBe(true);
  });

  it("names the row and field of a bad example", () => {
    expect(() => prepareRows([rows[0], { logProbs: [0, 0, 0], gold: 0 }])).toThrow(/row 1 has 3 log-probabilities/);
    expect(() => prepareRows([{ logProbs: [0, 0], gold: 2 }])).toThrow(/row 0: gold 2/);
    expect(() => prepareRows([{ logProbs: [0, 0], gold: [0.5, 0.6] }])).toThrow(/sums to 1.1/);
    expect(() => prepareRows([rows[0], { ...rows[1], features: [1] }])).toThrow(/row 1 has 1 features/);
    expect(() => prepareRows([{ logProbs: [Number.NaN, 0], gold: 0 }])).toThrow(/not a log-probability/);
  });

  it("fits level 2 only when every row has features", () => {
    expect(prepareRows(rows).withFeatures).toBe(true);
    expect(prepareRows([...rows, { logProbs: [0, -1], gold: 0 }]).withFeatures).toBe(false);
  });
});

describe("folds", () => {
  it("never asks for more folds than rows", () => {
    expect([foldCount(0, 5), foldCount(1, 5), foldCount(3, 5), foldCount(100, 5)]).toEqual([1, 1, 3, 5]);
  });

  it("stratifies: each class spread evenly, fold sizes within one, the same for a seed", () => {
    const labels = [...Array(23).fill(0), ...Array(11).fill(1), ...Array(6).fill(2)];
    const folds = assignFolds(labels, 5, 9);
    expect(assignFolds(labels, 5, 9)).toEqual(folds);
    expect(assignFolds(labels, 5, 10)).not.toEqual(folds);
    const sizes = [0, 1, 2, 3, 4].map((f) => folds.filter((x) => x === f).length);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    for (const label of [0, 1, 2]) {
      const per = [0, 1, 2, 3, 4].map((f) => folds.filter((x, i) => x === f && labels[i] === label).length);
      expect(Math.max(...per) - Math.min(...per), `class ${label}: ${per}`).toBeLessThanOrEqual(1);
    }
  });
});
