import { describe, expect, it } from "vitest";
import { Mulberry32 } from "../gguf/prng.js";
import { crossValidate } from "./calibrate-folds.js";
import type { JudgmentClient } from "./client.js";
import { parseDataset } from "./dataset.js";
import { foldsOf } from "./quality.js";
import { formatCalibrateText } from "./report.js";
import { runCalibration } from "./run-calibrate.js";
import type { LogitRecord } from "./temperature.js";

const show = (value: unknown) => JSON.stringify(value, null, 1);
const noProgress = () => ({ advance() {}, finish() {} });

/** One noul answer per item, overconfident by `t`: logits t·log q with gold drawn from q. */
function overconfidentItems(count: number, t: number, seed: number): LogitRecord[][] {
  const rng = new Mulberry32(seed);
  return Array.from({ length: count }, () => {
    const q = 0.05 + 0.9 * rng.next();
    const gold = rng.next() < q ? [1, 0] : [0, 1];
    return [{ type: "noul" as const, logits: [t * Math.log(q), t * Math.log(1 - q)], gold }];
  });
}

describe("cross-validated calibration (judge calibrate --folds)", () => {
  it("scores every answer exactly once, each fold with temperatures that never saw its answers", () => {
    const items = overconfidentItems(200, 3, 7);
    const cv = crossValidate(items, 5, 1, 50, undefined);
    expect(cv.predictions, "every answer once").toHaveLength(200);
    expect(cv.temperatures).toHaveLength(5);
    for (const t of cv.temperatures) expect(t.noul / 3, show(cv.temperatures)).toBeGreaterThan(0.7);

    // Flip every gold label of fold 0: its own temperatures stay the same to the last bit, while
    // every other fold's move, because fold 0 is part of what they were fitted on.
    const fold = foldsOf(items.length, 5, 1);
    const flipped = items.map((records, i) => (fold[i] === 0 ? records.map((r) => ({ ...r, gold: [r.gold[1], r.gold[0]] })) : records));
    const again = crossValidate(flipped, 5, 1, 50, undefined);
    expect(again.temperatures[0], show({ before: cv.temperatures, after: again.temperatures })).toEqual(cv.temperatures[0]);
    for (let f = 1; f < 5; f++) expect(again.temperatures[f].noul, `fold ${f}`).not.toBe(cv.temperatures[f].noul);
  });

  it("deals the same folds for the same seed, others for another", () => {
    const items = overconfidentItems(50, 2, 3);
    expect(crossValidate(items, 4, 9, 50, undefined)).toEqual(crossValidate(items, 4, 9, 50, undefined));
    expect(crossValidate(items, 4, 10, 50, undefined).temperatures).not.toEqual(crossValidate(items, 4, 9, 50, undefined).temperatures);
  });
});

/** Items whose state names them; the client answers noul with logits ±1, right or wrong as told. */
function run(rightFor: (n: number) => boolean, folds: number, count = 40) {
  const items = parseDataset(
    Array.from({ length: count }, (_, n) =>
      JSON.stringify({ id: `i${n}`, state: `${n}`, questions: { q: { type: "noul", instructions: "x" } }, gold: { q: true } }),
    ).join("\n"),
    "d.jsonl",
  );
  const client: JudgmentClient = {
    judge: async (body: any) => {
      const logits = rightFor(Number(body.state)) ? { true: 1, false: -1 } : { true: -1, false: 1 };
      return { model: "m", answers: { q: { type: "noul", noul: 1 / (1 + Math.exp(logits.false - logits.true)), logits } }, usage: { input_tokens: 1 } };
    },
  };
  return runCalibration({ items, client, concurrency: 4, holdout: 0.3, folds, seed: 1, minBucketAnswers: 50, progress: noProgress });
}

describe("runCalibration with folds", () => {
  it("reports on every answer, writes the fit on all items, and lowers the cross-validated NLL of an underconfident judge", async () => {
    const result = await run(() => true, 5);
    const context = show(result);
    expect(result.split, context).toEqual({ fitItems: 40, fitAnswers: 40, heldOutItems: 40, heldOutAnswers: 40, inSample: false });
    expect(result.folds?.k, context).toBe(5);
    expect(result.temperatures.noul, context).toBe(result.fit.types.noul!.temperature);
    expect(result.temperatures.noul, context).toBeLessThan(1);
    expect(result.keptAtOne, context).toEqual([]);
    expect(result.heldOut.calibrated.noul!.nll, context).toBeLessThan(result.heldOut.uncalibrated.noul!.nll);
  });

  it("keeps T = 1 when the fits make the answers they did not see worse, and says so", async () => {
    // Fold 0's items are answered wrongly, the rest rightly: fitted without fold 0, T sharpens,
    // and fold 0's confident wrong answers cost more than all the others gain.
    const fold = foldsOf(40, 5, 1);
    const result = await run((n) => fold[n] !== 0, 5);
    const context = show(result);
    expect(result.temperatures.noul, context).toBe(1);
    expect(result.keptAtOne, context).toEqual([expect.objectContaining({ type: "noul" })]);
    expect(result.keptAtOne[0].nllAtFitted, context).toBeGreaterThan(result.keptAtOne[0].nllAtOne);
    expect(result.heldOut.calibrated.noul!.nll, "the report shows what is written").toBe(result.heldOut.uncalibrated.noul!.nll);
    const text = formatCalibrateText(result, { path: "p.json", written: false });
    expect(text, text).toMatch(/Kept T = 1 for noul: the fitted T = [\d.]+ raised the cross-validated NLL from \d\.\d{4} to \d+\.\d{4}/);
    expect(text, text).toContain("Calibration on 40 answers (40 items), 5-fold cross-validated: each fold scored with temperatures fitted on the other 4:");
  });

  it("refuses fewer items than folds before asking anything", async () => {
    await expect(run(() => true, 5, 4)).rejects.toThrow("--folds 5 needs at least 5 items; the dataset has 4");
  });
});
