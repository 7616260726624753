import { describe, expect, it } from "vitest";
import { foldsOf, kFoldTemperatureScaling, macroF1, priorBaseline, qualityReport, type QuestionPrediction } from "./quality.js";

const show = (value: unknown) => JSON.stringify(value, null, 1);

const noul = (item: string, pTrue: number, gold: boolean): QuestionPrediction => ({
  item,
  question: "q",
  labels: ["true", "false"],
  type: "noul",
  probabilities: [pTrue, 1 - pTrue],
  gold: gold ? [1, 0] : [0, 1],
});

describe("macro-F1", () => {
  it("averages the F1 of every class, so a judge that always says the majority label scores low", () => {
    // 3 true, 1 false, always answering true: F1(true) = 2·3/(2·3+1) = 6/7, F1(false) = 0.
    const records = [noul("a", 0.9, true), noul("b", 0.9, true), noul("c", 0.9, true), noul("d", 0.9, false)];
    expect(macroF1(records)).toBeCloseTo(3 / 7, 12);
    const perfect = [noul("a", 0.9, true), noul("b", 0.1, false)];
    expect(macroF1(perfect)).toBe(1);
  });

  it("keeps different questions' classes apart even when their labels are the same", () => {
    const other = { ...noul("a", 0.9, true), question: "r" };
    expect(macroF1([noul("a", 0.9, true), other])).toBe(1);
  });
});

describe("the prior baseline", () => {
  it("answers every question with its gold label frequencies", () => {
    const records = [noul("a", 0.9, true), noul("b", 0.2, true), noul("c", 0.5, true), noul("d", 0.7, false)];
    const prior = priorBaseline(records);
    for (const p of prior) expect(p.probabilities, show(prior)).toEqual([0.75, 0.25]);
  });
});

describe("k-fold temperature scaling", () => {
  it("deals items into k folds of near-equal size, the same for the same seed", () => {
    const folds = foldsOf(10, 3, 7);
    expect(folds).toEqual(foldsOf(10, 3, 7));
    const sizes = [0, 1, 2].map((k) => folds.filter((f) => f === k).length).sort();
    expect(sizes).toEqual([3, 3, 4]);
  });

  it("scores every answer once, with a temperature fitted without its item", () => {
    // Overconfident and right 70% of the time: every fold fits T > 1.
    const records = Array.from({ length: 40 }, (_, i) => noul(`i${i}`, 0.99, i % 10 < 7));
    const logitsOf = (r: QuestionPrediction) => r.probabilities.map(Math.log);
    const { heldOut, temperatures } = kFoldTemperatureScaling(records, logitsOf, 4, 1);
    expect(heldOut.map((r) => r.item).sort(), show(heldOut)).toEqual(records.map((r) => r.item).sort());
    expect(temperatures, show(temperatures)).toHaveLength(4);
    for (const t of temperatures) expect(t.noul!, show(temperatures)).toBeGreaterThan(1);
    const report = qualityReport(records, 4, 1);
    expect(report.byType.noul!.kFold.nll, show(report)).toBeLessThan(report.byType.noul!.model.nll);
  });
});

describe("AUROC", () => {
  it("is 1 for a perfect separation, 0.5 for none, and counts ties half", async () => {
    const { auroc } = await import("./quality.js");
    expect(
      auroc([
        { score: 1, positive: false },
        { score: 2, positive: true },
      ]),
    ).toBe(1);
    expect(
      auroc([
        { score: 2, positive: false },
        { score: 1, positive: true },
      ]),
    ).toBe(0);
    expect(
      auroc([
        { score: 1, positive: false },
        { score: 1, positive: true },
      ]),
    ).toBe(0.5);
    // positives 3, 5; negatives 1, 4: pairs won 3>1, 5>1, 5>4 → 3 of 4.
    expect(auroc([1, 3, 4, 5].map((score) => ({ score, positive: score === 3 || score === 5 })))).toBe(0.75);
    expect(auroc([{ score: 1, positive: true }])).toBeNaN();
  });
});
