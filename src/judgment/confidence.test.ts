import { describe, expect, it } from "vitest";
import { argmax, choiceConfidence, scoreConfidence } from "./confidence.js";

const show = (p: number[], c: number) => `probabilities ${JSON.stringify(p)} → confidence ${c}`;

/** The reference definition from jev-compat.md, written out independently. */
function referenceScoreConfidence(p: number[]): number {
  const n = p.length;
  const k = p.indexOf(Math.max(...p));
  const d = p.reduce((sum, _, i) => sum + Math.abs(i - (n - 1) / 2), 0) / n;
  return Math.max(0, 1 - p.reduce((sum, pi, i) => sum + pi * Math.abs(i - k), 0) / d);
}

describe("choiceConfidence: (m − 1/n) / (1 − 1/n)", () => {
  it("gives 0.82 on the worked example {0.88, 0.12, 0}", () => {
    const p = [0.88, 0.12, 0];
    const c = choiceConfidence(p);
    expect(c, show(p, c)).toBeCloseTo(0.82, 12);
  });

  it("is 0 for a uniform answer and 1 for a certain one, for every n from 2 to 255", () => {
    for (let n = 2; n <= 255; n++) {
      const uniform = Array.from({ length: n }, () => 1 / n);
      const certain = Array.from({ length: n }, (_, i) => (i === n - 1 ? 1 : 0));
      expect(Math.abs(choiceConfidence(uniform)), `n=${n} ${show(uniform, choiceConfidence(uniform))}`).toBeLessThan(1e-12);
      expect(choiceConfidence(certain), `n=${n}`).toBe(1);
    }
  });

  it("does not depend on which option is the most likely", () => {
    const a = [0.7, 0.2, 0.1];
    const b = [0.1, 0.2, 0.7];
    expect(choiceConfidence(a)).toBe(choiceConfidence(b));
  });

  it("stays within [0, 1]", () => {
    for (const p of [
      [0.5, 0.5],
      [0.51, 0.49],
      [1, 0],
      [0.4, 0.3, 0.3],
      [0.25, 0.25, 0.25, 0.25],
    ]) {
      const c = choiceConfidence(p);
      expect(c >= 0 && c <= 1, show(p, c)).toBe(true);
    }
  });
});

describe("scoreConfidence: max(0, 1 − Σ pᵢ·|i − k| / D)", () => {
  it("gives 0.925 on the worked example {0, 0.95, 0.05}", () => {
    const p = [0, 0.95, 0.05];
    const c = scoreConfidence(p);
    expect(c, show(p, c)).toBeCloseTo(0.925, 12);
  });

  it("gives 0.355 on the worked example {0, 0.57, 0.43}", () => {
    const p = [0, 0.57, 0.43];
    const c = scoreConfidence(p);
    expect(c, show(p, c)).toBeCloseTo(0.355, 12);
  });

  it("is 1 when all the probability is on one level, for every scale length 2 to 10", () => {
    for (let n = 2; n <= 10; n++) {
      for (let k = 0; k < n; k++) {
        const p = Array.from({ length: n }, (_, i) => (i === k ? 1 : 0));
        expect(scoreConfidence(p), show(p, scoreConfidence(p))).toBe(1);
      }
    }
  });

  it("clamps at 0 when the spread exceeds the mean distance from the middle", () => {
    const p = [0.5, 0, 0.5];
    const c = scoreConfidence(p);
    expect(c, show(p, c)).toBe(0);
  });

  it("matches the reference definition on assorted distributions for every scale length", () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let n = 2; n <= 10; n++) {
      for (let trial = 0; trial < 20; trial++) {
        const raw = Array.from({ length: n }, () => random() ** 3);
        const total = raw.reduce((a, b) => a + b, 0);
        const p = raw.map((x) => x / total);
        const c = scoreConfidence(p);
        expect(c, show(p, c)).toBeCloseTo(referenceScoreConfidence(p), 12);
        expect(c >= 0 && c <= 1, show(p, c)).toBe(true);
      }
    }
  });
});

describe("argmax", () => {
  it("returns the index of the largest value", () => {
    expect(argmax([0.1, 0.7, 0.2])).toBe(1);
    expect(argmax([0.1, 0.2, 0.7])).toBe(2);
    expect(argmax([1])).toBe(0);
  });

  it("returns the first index on ties", () => {
    expect(argmax([0.25, 0.25, 0.25, 0.25])).toBe(0);
    expect(argmax([0.1, 0.45, 0.45])).toBe(1);
  });
});
