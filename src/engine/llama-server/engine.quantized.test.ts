import { afterAll, describe, expect, it } from "vitest";
import type { FixtureWeightType } from "../../gguf/fixture-model.js";
import { tinyFixturePath } from "../../testing/fixture.js";
import { startLlamaServer, type LlamaServerProcess } from "../../testing/llama-server.js";
import { createLlamaEngine } from "../llama/engine.js";
import type { JudgmentEngine } from "../types.js";
import { createLlamaServerEngine } from "./engine.js";
import { choiceQuestion as choice, NOUL_QUESTIONS as NOULS, scoreQuestion as score } from "../../testing/exactness.js";
import { maxDifference, probabilities, remoteOptions, settledStatus } from "./test-helpers.js";

/**
 * Real models are quantized, and llama.cpp runs Q4_0 and Q8_0 weights through other kernels than
 * F32 (repacked for the CPU at load). The llama-server the project builds must start on them and
 * answer as the in-process engine does. On a CPU with AMX, a build that let -march=native enable
 * ggml's AMX kernels crashed with a segmentation fault on its first decode of either type.
 *
 * Measured max |Δp| against the in-process engine (AMX-capable Xeon, -fa off, one thread each):
 * Q4_0 1.8e-7 / 2.1e-7 (short / long state), within the F32 tests' 1e-6. Q8_0 5.9e-4 on the short
 * state, all of it in two labels of the 27-option question (p 0.816 and 0.059, so a relative
 * 7e-4; every other probability within 1e-6). Most likely because quantized matrix products
 * round the activations to int8 first, so a last-bit difference between the two builds' float arithmetic
 * (this one is compiled for the CPU it runs on; node-llama-cpp loads its prebuilt variant for
 * the CPU's family, sapphirerapids there) now and then rounds one activation to the next int8
 * step: a jump of up to 1/254 of its block's largest value where F32 weights would carry 1e-7.
 * Where that happens depends on the numbers, not the weight type; it showed on Q8_0 here. Each
 * engine on its own is exact: a question alone, among others and after other requests gives
 * bit-identical numbers (checked below).
 */
const TOLERANCE: Record<"Q4_0" | "Q8_0", number> = { Q4_0: 1e-6, Q8_0: 1e-3 };

const STATE = { ticket: "I was charged twice and want the money back.", priority: 2 };
const LONG_STATE = "word ".repeat(120);
const QUESTIONS = [choice(4), choice(27), score(5), ...NOULS];

const started: Array<{ close(): Promise<void> }> = [];
const measured: string[] = [];
afterAll(async () => {
  if (measured.length > 0) console.log(`max |Δp| llama-server vs in-process, quantized:\n  ${measured.join("\n  ")}`);
  for (const s of started.reverse()) await s.close();
});

async function bothEngines(weights: FixtureWeightType): Promise<{ server: LlamaServerProcess; remote: JudgmentEngine; local: JudgmentEngine }> {
  const model = await tinyFixturePath(1, weights);
  const server = await startLlamaServer({ model, slots: 1, contextSize: 8192 });
  started.push({ close: () => server.stop() });
  const remote = createLlamaServerEngine(remoteOptions(server.url));
  started.push(remote);
  const local = createLlamaEngine({ model, modelsDir: ".", contextSize: 8192, maxRequestTokens: 100_000, threads: 1 });
  started.push(local);
  await Promise.all([remote.ready, local.ready]);
  return { server, remote, local };
}

describe.each(["Q4_0", "Q8_0"] as const)("llama-server on %s weights", (weights) => {
  it("starts, passes its start-up probe and answers as the in-process engine does", async () => {
    const { server, remote, local } = await bothEngines(weights);
    const status = await settledStatus(remote);
    expect(status, `${JSON.stringify(status)}\n${server.output().slice(-3000)}`).toEqual({ state: "ready" });
    for (const [name, state] of [
      ["short state", STATE],
      ["long state", LONG_STATE],
    ] as const) {
      const [ours, reference] = [await probabilities(remote, state, QUESTIONS), await probabilities(local, state, QUESTIONS)];
      expect(ours.prepared.inputTokens, `${weights}, ${name}: input tokens`).toBe(reference.prepared.inputTokens);
      const worst = maxDifference(ours.probabilities, reference.probabilities);
      measured.push(`${weights}, ${name}: ${worst.toExponential(2)}`);
      const context = `${weights}, ${name}: max |Δp| = ${worst}\nllama-server ${JSON.stringify(ours.probabilities)}\nin-process ${JSON.stringify(reference.probabilities)}`;
      expect(worst, context).toBeLessThanOrEqual(TOLERANCE[weights]);
    }
    for (const engine of [remote, local]) {
      const alone = (await probabilities(engine, STATE, [choice(27)])).probabilities[0];
      const amongOthers = (await probabilities(engine, STATE, [score(3), choice(27), NOULS[0]])).probabilities[1];
      await probabilities(engine, LONG_STATE, [choice(5)]);
      const later = (await probabilities(engine, STATE, [choice(27)])).probabilities[0];
      const which = `${weights}, ${engine === remote ? "llama-server" : "in-process"}`;
      expect(amongOthers, `${which}: among other questions vs alone`).toEqual(alone);
      expect(later, `${which}: after another request vs before`).toEqual(alone);
    }
  });
});
