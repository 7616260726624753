import { describe, expect, it } from "vitest";
import { fitQuestionHead } from "../../judgment/heads/index.js";
import { syntheticRows } from "../../judgment/heads/test-helpers.js";
import { workerHeadFitter } from "./head-fitter.js";

describe("workerHeadFitter", () => {
  it("fits in a worker thread the same heads and reports as in process, a question after another", async () => {
    const fitter = workerHeadFitter(new AbortController().signal);
    try {
      for (const seed of [1, 2]) {
        const rows = syntheticRows({ n: 60, d: 24, classes: 3, seed, separation: 4, factors: 2 });
        const [inWorker, inProcess] = await Promise.all([fitter.fit(rows, { seed }), Promise.resolve(fitQuestionHead(rows, { seed }))]);
        expect(inWorker.head).toEqual(inProcess.head);
        expect(inWorker.report).toEqual(inProcess.report);
      }
    } finally {
      await fitter.close();
    }
  });

  it("passes a fit's error back, and stops when its signal is aborted", async () => {
    const abort = new AbortController();
    const fitter = workerHeadFitter(abort.signal);
    await expect(fitter.fit(syntheticRows({ n: 10, d: 4, classes: 2, seed: 1 }), { seed: 1, l2Grid: [] })).rejects.toThrow(/l2Grid/);
    abort.abort();
    await expect(fitter.fit(syntheticRows({ n: 10, d: 4, classes: 2, seed: 1 }), { seed: 1 })).rejects.toThrow(/fitting thread ended/);
    await fitter.close();
  });
});
