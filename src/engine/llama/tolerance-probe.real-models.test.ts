import { describe, expect, it } from "vitest";
import { availableRealModels } from "../../testing/real-models.js";
import { createLlamaEngine } from "./engine.js";

const models = availableRealModels();

/**
 * On real weights the in-process engine's tolerant reads move with cache history and other
 * traffic (docs/concepts/exactness.md): the start-up probe measures it, reports the
 * figure, and refuses to serve when it is over the bound, as the llama-server engine does.
 */
describe.skipIf(models.length === 0).each(models)("on $name, the in-process tolerant probe", ({ file, name }) => {
  const engineWith = (exactnessBound?: number) =>
    createLlamaEngine({
      model: file,
      modelsDir: ".",
      contextSize: 4096,
      maxRequestTokens: 100_000,
      threads: 1,
      gpu: "off",
      slots: 2,
      exactness: "tolerant",
      exactnessBound,
    });

  it("reports what it measured, and refuses to serve with a bound below it", async () => {
    const accepting = engineWith(1);
    await accepting.ready;
    const measured = accepting.description.exactness?.measured;
    await accepting.close();
    console.log(`${name}: tolerant, 2 slots, 1 thread: start-up probe measured max |Δp| ${measured}`);
    expect(measured, JSON.stringify(accepting.description)).toEqual(expect.any(Number));
    if (measured === 0) return; // nothing to refuse: the reads agreed exactly
    const refusing = engineWith(measured! / 2);
    try {
      await refusing.ready;
      expect(refusing.status(), JSON.stringify(refusing.status())).toEqual({
        state: "failed",
        detail: expect.stringMatching(/^refused: the start-up probe measured max \|Δp\| [0-9.e+-]+ between cached, fresh and batched reads, over the bound/),
      });
      await expect(refusing.prepare({ system: "", state: "s", questions: [] })).rejects.toThrow(/not available/);
    } finally {
      await refusing.close();
    }
  }, 300_000);
});
