import { describe, expect, it } from "vitest";
import type { JudgmentClient } from "./client.js";
import { parseDataset } from "./dataset.js";
import { formatCalibrateText } from "./report.js";
import { runCalibration, splitItems } from "./run-calibrate.js";

const show = (value: unknown) => JSON.stringify(value, null, 1);

/**
 * Items whose state says what the model answers: the fitting items are right with logits ±1
 * (underconfident, so the fit sharpens, T < 1), the held-out ones are wrong with the same logits
 * (so sharpening raises their NLL).
 */
function dataset(count: number): string {
  return Array.from({ length: count }, (_, n) =>
    JSON.stringify({ id: `i${n}`, state: `item ${n}`, questions: { q: { type: "noul", instructions: "x" } }, gold: { q: true } }),
  ).join("\n");
}

function clientAnswering(rightFor: (state: string) => boolean): JudgmentClient {
  return {
    judge: async (body: any) => {
      const right = rightFor(body.state as string);
      const logits = right ? { true: 1, false: -1 } : { true: -1, false: 1 };
      const p = 1 / (1 + Math.exp(logits.false - logits.true));
      return { model: "m", answers: { q: { type: "noul", noul: p, logits } }, usage: { input_tokens: 1 } };
    },
  };
}

describe("judge calibrate never writes a temperature that makes held-out NLL worse than T = 1", () => {
  const run = (rightFor: (state: string) => boolean, holdout = 0.3) =>
    runCalibration({
      items: parseDataset(dataset(40), "d.jsonl"),
      client: clientAnswering(rightFor),
      concurrency: 4,
      holdout,
      seed: 1,
      minBucketAnswers: 50,
      progress: () => ({ advance() {}, finish() {} }),
    });

  it("keeps T = 1 and says why when the fitted temperature is worse on the held-out answers", async () => {
    // runCalibration holds out the items that splitItems picks for the same seed.
    const heldOut = new Set(splitItems([...Array(40).keys()], 0.3, 1).heldOutItems.map((n) => `item ${n}`));
    expect(heldOut.size).toBe(12);
    const result = await run((state) => !heldOut.has(state));
    expect(result.fit.types.noul!.temperature, show(result.fit)).toBeLessThan(1);
    expect(result.temperatures.noul, show(result)).toBe(1);
    expect(result.keptAtOne, show(result.keptAtOne)).toEqual([
      expect.objectContaining({ type: "noul", nllAtOne: expect.any(Number), nllAtFitted: expect.any(Number) }),
    ]);
    expect(result.keptAtOne[0].nllAtFitted, show(result.keptAtOne)).toBeGreaterThan(result.keptAtOne[0].nllAtOne);
    // The held-out report shows what is written: calibrated equals uncalibrated.
    expect(result.heldOut.calibrated.noul!.nll, show(result.heldOut)).toBe(result.heldOut.uncalibrated.noul!.nll);
    const text = formatCalibrateText(result, { path: "p.json", written: false });
    expect(text, text).toMatch(/Kept T = 1 for noul: the fitted T = 0\.\d+ raised the held-out NLL from \d\.\d{4} to \d+\.\d{4}/);
  });

  it("writes the fitted temperature when it lowers the held-out NLL", async () => {
    const result = await run(() => true);
    expect(result.temperatures.noul, show(result)).toBeLessThan(1);
    expect(result.keptAtOne, show(result)).toEqual([]);
  });

  it("has nothing to compare with when fitted and reported on the same answers (--holdout 0)", async () => {
    const result = await run(() => true, 0);
    expect(result.keptAtOne, show(result)).toEqual([]);
  });
});
