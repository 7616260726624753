import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Question } from "../../judgment/schema.js";
import { choiceQuestion as choice, EXACTNESS_STATE as STATE, NOUL_QUESTIONS as NOULS, scoreQuestion as score } from "../../testing/exactness.js";
import { startLlamaServer, type LlamaServerProcess } from "../../testing/llama-server.js";
import { availableRealModels } from "../../testing/real-models.js";
import { createLlamaEngine } from "../llama-engine.js";
import type { JudgmentEngine } from "../types.js";
import { createLlamaServerEngine } from "./engine.js";
import { maxDifference, probabilities, remoteOptions } from "./test-helpers.js";

/**
 * llama-server against the in-process engine on the two real models, through the engines'
 * public interface only (prepare, evaluate), so the test holds whatever the walk does inside.
 *
 * Measured max |Δp| (README, "Real models for tests and measurement"): what remains is the two
 * builds' arithmetic (node-llama-cpp's prebuilt CPU variant against scripts/build-llama-server.sh's
 * GGML_NATIVE build) on quantized weights (Q4_1, Q4_K_M), whose kernels differ more between builds
 * than the fixtures' F32 ones.
 */
const TOLERANCE = 1e-4;

const models = availableRealModels();

describe.skipIf(models.length === 0).each(models)("on $name, llama-server answers as the in-process engine", ({ name, file }) => {
  let server: LlamaServerProcess;
  let remote: JudgmentEngine;
  let local: JudgmentEngine & { close(): Promise<void> };
  const measured: string[] = [];

  beforeAll(async () => {
    // --swa-full: a sliding-window model (Gemma 3) keeps the whole cache, as the in-process
    // engine does, so a cached prefix and a rolled-back branch read the same cells as a fresh read.
    server = await startLlamaServer({ model: file, slots: 2, contextSize: 16384, threads: 2, extraArgs: ["--swa-full"] });
    const engine = createLlamaServerEngine(remoteOptions(server.url, { server: { url: server.url, timeoutMs: 60_000 } }));
    remote = engine;
    local = createLlamaEngine({ model: file, modelsDir: ".", contextSize: 8192, maxRequestTokens: 100_000, threads: 2, gpu: "off" });
    await Promise.all([engine.ready, (local as any).ready]);
    expect(await remote.status(), server.output()).toEqual({ state: "ready" });
  });
  afterAll(async () => {
    if (measured.length > 0) console.log(`${name}: max |Δp| llama-server vs in-process:\n  ${measured.join("\n  ")}`);
    await remote?.close();
    await local?.close();
    await server?.stop();
  });

  async function expectSame(state: unknown, questions: Question[], what: string) {
    const ours = await probabilities(remote, state, questions);
    const theirs = await probabilities(local, state, questions);
    expect(ours.prepared.inputTokens, `${what}: input tokens (billing) differ`).toBe(theirs.prepared.inputTokens);
    const worst = maxDifference(ours.probabilities, theirs.probabilities);
    measured.push(`${what}: ${worst.toExponential(2)}`);
    expect(worst, `${what}: max |Δp| = ${worst}\nllama-server ${JSON.stringify(ours.probabilities)}\nin-process ${JSON.stringify(theirs.probabilities)}`).toBeLessThanOrEqual(TOLERANCE);
  }

  for (const n of [2, 27, 255]) {
    it(`choice with ${n} options`, async () => {
      await expectSame(STATE, [choice(n)], `choice ${n}`);
    });
  }
  it("noul and score in one request", async () => {
    await expectSame(STATE, [...NOULS, score(5), score(10)], "noul + score");
  });
  it("a long state (\"word \" × 700, past Gemma's 512-token window) with several question types", async () => {
    await expectSame("word ".repeat(700), [choice(27), score(5), NOULS[0]], "long state");
  });
});
