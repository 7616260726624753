import { describe, expect, it } from "vitest";
import { applyHead, crossValidate, fitQuestionHead, L2_GRID, level2Omission } from "./index.js";
import { softmax } from "./optimise.js";
import { gaussian, syntheticRows } from "./test-helpers.js";
import { seededRandom, shuffleInPlace } from "./random.js";
import { assignFolds, prepareRows } from "./rows.js";
import type { LabelledRow } from "./types.js";

/** A readout that is calibrated by construction: each gold is drawn from the readout's own distribution. */
function calibratedRows(n: number, classes: number, seed: number): LabelledRow[] {
  const random = seededRandom(seed);
  const normal = gaussian(random);
  return Array.from({ length: n }, () => {
    const p = softmax(Array.from({ length: classes }, () => normal() * 2));
    let c = 0;
    for (let acc = p[0], u = random(); u > acc && c < classes - 1; acc += p[++c]);
    return { logProbs: p.map(Math.log), gold: c };
  });
}

/** 90 rows of 160 features: few enough rows that level 2 fits in the rows' own basis (logistic.ts). */
const small = (seed: number, classes = 3) => syntheticRows({ n: 90, d: 160, classes, seed, separation: 5, factors: 2 });

describe("fitQuestionHead", () => {
  it("is deterministic for a seed, and the same for shuffled rows", () => {
    const rows = small(1);
    const first = fitQuestionHead(rows, { seed: 5 });
    expect(fitQuestionHead(rows, { seed: 5 })).toEqual(first);
    const shuffled = shuffleInPlace([...rows], seededRandom(99));
    const again = fitQuestionHead(shuffled, { seed: 5 });
    expect(again.head).toEqual(first.head);
    expect(again.report).toEqual(first.report);
  });

  it("chooses only among the candidates it is given; without level 2 its report leaves it out, saying why", () => {
    const all = fitQuestionHead(small(2), { seed: 1 });
    const level1Only = fitQuestionHead(small(2), { seed: 1, candidates: ["level1"] });
    expect(level1Only.report.chosen).not.toBe("level2");
    expect(level1Only.head.kind).not.toBe("level2");
    expect(level1Only.report.level2).toBeUndefined();
    expect(level1Only.report.level2Omitted).toBe("not among the heads asked for");
    expect(level1Only.report.level1).toEqual(all.report.level1);
    expect(fitQuestionHead(small(2), { seed: 1, candidates: ["level2"] }).head).toEqual(all.head);
  });

  it("chooses level 2 where the hidden state carries the answer, and its head is plain JSON", () => {
    const { head, report } = fitQuestionHead(small(2), { seed: 1 });
    expect(report.chosen).toBe("level2");
    expect(head.kind).toBe("level2");
    expect(report.level2!.accuracy).toBeGreaterThan(0.9);
    expect(report.level2!.nll).toBeLessThan(report.prior.nll);
    expect(L2_GRID).toContain(report.l2);
    expect(JSON.parse(JSON.stringify(head))).toEqual(head);
    expect(report.perClass).toEqual([30, 30, 30]);
    expect(report.reliability.bins).toHaveLength(10);
    expect(report.reliability.bins.reduce((a, bin) => a + bin.count, 0)).toBe(90);
  });

  it("keeps the plain readout when it is already calibrated", () => {
    const { head, report } = fitQuestionHead(calibratedRows(400, 3, 3), { seed: 1 });
    expect(report.level2).toBeUndefined();
    expect(head).toEqual({ kind: "plain" });
    expect(report.chosen).toBe("plain");
    expect(report.plain.nll).toBeLessThanOrEqual(report.level1.nll);
  });

  it("keeps a head only when it beats plain's held-out NLL", () => {
    for (const seed of [1, 2, 3]) {
      const { report } = fitQuestionHead(small(seed), { seed });
      const best = Math.min(report.plain.nll, report.level1.nll, report.level2!.nll);
      expect(report[report.chosen]!.nll).toBe(best);
    }
  });

  it("fits soft gold and -Infinity readouts without NaN", () => {
    const rows = small(4, 2).map((row, i) => ({
      ...row,
      logProbs: i % 3 === 0 ? [0, Number.NEGATIVE_INFINITY] : row.logProbs,
      gold: i % 2 === 0 ? (row.gold === 0 ? [0.8, 0.2] : [0.1, 0.9]) : row.gold,
    }));
    const { head, report } = fitQuestionHead(rows, { seed: 1 });
    expect(JSON.stringify(report)).not.toMatch(/null|NaN/);
    for (const metrics of [report.prior, report.plain, report.level1, report.level2!]) expect(Number.isFinite(metrics.nll)).toBe(true);
    const p = applyHead(head, [0, Number.NEGATIVE_INFINITY], rows[0].features);
    expect(p.every(Number.isFinite)).toBe(true);
  });

  it("handles tiny sets: no rows, one row, fewer rows than folds, classes without examples", () => {
    expect(fitQuestionHead([], { seed: 1 }).head).toEqual({ kind: "plain" });
    const one = fitQuestionHead([{ logProbs: [-0.1, -2.4], gold: 0 }], { seed: 1 });
    expect(one.head).toEqual({ kind: "plain" });
    expect(one.report.folds).toBe(1);
    expect(one.report.plain.n).toBe(1);
    const rows = syntheticRows({ n: 3, d: 4, classes: 5, seed: 1 });
    const three = fitQuestionHead(rows, { seed: 1 });
    expect(three.report.folds).toBe(3);
    expect(three.report.perClass).toEqual([1, 1, 1, 0, 0]);
    expect(JSON.stringify(three.report)).not.toMatch(/null|NaN/);
    const wide = syntheticRows({ n: 30, d: 4, classes: 255, seed: 2 }).map(({ features: _, ...row }) => row);
    const report = fitQuestionHead(wide, { seed: 1 }).report;
    expect(report.classes).toBe(255);
    expect(report.level2Omitted).toMatch(/hidden state/);
  });
});

it("leaves level 2 out, saying why, when it would take minutes: 255 options with about one example each", () => {
  const { rows, classes } = prepareRows(syntheticRows({ n: 300, d: 300, classes: 255, seed: 3 }));
  expect(level2Omission(rows, classes, true, 5)).toMatch(/too large to fit: 255 classes × 300 examples × 300/);
  expect(level2Omission(rows.slice(0, 200), classes, true, 5)).toBeUndefined();
});

describe("cross-validation scores held-out folds only", () => {
  it("flipping the gold of one fold moves only that fold's score, and never that fold's predictions", () => {
    const { rows, classes } = prepareRows(small(6, 2));
    const assignment = assignFolds(
      rows.map((row) => row.label),
      5,
      1,
    );
    const flipped = rows.map((row, i) => (assignment[i] === 0 ? { ...row, gold: Float64Array.from([row.gold[1], row.gold[0]]), label: 1 - row.label } : row));
    const before = crossValidate(rows, classes, true, assignment, L2_GRID);
    const after = crossValidate(flipped, classes, true, assignment, L2_GRID);
    for (const kind of ["prior", "plain", "level1", "level2"] as const) {
      rows.forEach((_, i) => {
        if (assignment[i] === 0) expect(after.heldOut[kind]![i], `${kind} row ${i}`).toEqual(before.heldOut[kind]![i]);
      });
      // (The prior of a balanced yes/no is ½ either way, so only the others' score can show it.)
      if (kind !== "prior") expect(after.perFold[kind]![0].nll, kind).not.toBe(before.perFold[kind]![0].nll);
    }
    // The readout is not fitted, so the other folds' scores cannot move at all.
    for (let f = 1; f < 5; f++) expect(after.perFold.plain![f]).toEqual(before.perFold.plain![f]);
    expect(after.level2!.l2PerFold[0]).toBe(before.level2!.l2PerFold[0]);
  });
});
