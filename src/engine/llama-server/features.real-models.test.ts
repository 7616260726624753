import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPrompt } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import { loadedCpuLibraries } from "../../testing/cpu-library.js";
import { expectDomainTaskOnLevel2 } from "../../testing/domain-task-fit.js";
import { startLlamaServer, type LlamaServerProcess } from "../../testing/llama-server.js";
import { realModel } from "../../testing/real-models.js";
import { createLlamaEngine, type LlamaEngine } from "../llama/engine.js";
import { EngineFailedError, EngineUnavailableError, type JudgmentEngine } from "../types.js";
import { createLlamaServerEngine } from "./engine.js";
import { remoteOptions, settledStatus } from "./test-helpers.js";

/**
 * Level 2 on llama-server: hidden states read from a second server on the same GGUF started with
 * `--embeddings --pooling last`, against the in-process engine's (which features.real-models.test.ts
 * in engine/llama proves are the answer position's final hidden state). On SmolLM2 only: the
 * llama-server engine refuses Gemma 3 270M (its numbers depend on batching, parity.real-models.test.ts).
 *
 * Both sides run node-llama-cpp's CPU library (scripts/build-llama-server.sh), printed here, and
 * agreed bit for bit at 136 and 843 tokens (libggml-cpu-zen4.so). Past 512 tokens the in-process
 * engine cuts batches at 512 while the server reads one, so what is asserted is a bound on the
 * kernels' batch invariance, which other CPU libraries need not share bit for bit.
 */
const smol = realModel("smollm2-135m-instruct");
const gemma = realModel("gemma3-270m");
/** Relative to the vector's largest entry (measured: 0). */
const BOUND = 1e-4;
const FEATURES_ARGS = ["--embeddings", "--pooling", "last", "-b", "4096", "-ub", "4096"];

const QUESTIONS: Question[] = [
  {
    type: "choice",
    instructions: "What is the review sentence about?",
    criteria: { phone: "a mobile phone or a phone accessory", movie: "a film", restaurant: "a restaurant, its food or its service" },
  },
  { type: "noul", instructions: "The sentence expresses a positive opinion." },
];
const STATES = ["I can take a little bad service but the food sucks.", "A wonderful film, I cried twice. ".repeat(90)];

describe.skipIf(!smol.file)("llama-server's hidden states from a features server, on SmolLM2", () => {
  let answering: LlamaServerProcess;
  let features: LlamaServerProcess;
  let remote: JudgmentEngine;
  let local: LlamaEngine;
  const measured: string[] = [];

  const engineOn = (featuresUrl: string) =>
    createLlamaServerEngine(
      remoteOptions(answering.url, { server: { url: answering.url, timeoutMs: 120_000 }, featuresServer: { url: featuresUrl, timeoutMs: 120_000 } }),
    );

  beforeAll(async () => {
    [answering, features] = await Promise.all([
      startLlamaServer({ model: smol.file!, slots: 1, contextSize: 4096 }),
      startLlamaServer({ model: smol.file!, slots: 1, contextSize: 4096, extraArgs: FEATURES_ARGS }),
    ]);
    remote = engineOn(features.url);
    local = createLlamaEngine({ model: smol.file!, modelsDir: ".", contextSize: 4096, maxRequestTokens: 100_000, threads: 1, gpu: "off" });
    await Promise.all([(remote as { ready: Promise<void> }).ready, local.ready]);
    expect(await settledStatus(remote), answering.output()).toEqual({ state: "ready" });
    console.log(`CPU library: features server ${loadedCpuLibraries(features.pid).join(", ")}, in process ${loadedCpuLibraries().join(", ")}`);
  }, 300_000);
  afterAll(async () => {
    if (measured.length > 0) console.log(`llama-server features vs in-process, max |Δ| / max |h|:\n  ${measured.join("\n  ")}`);
    await remote?.close();
    await local?.close();
    await Promise.all([answering?.stop(), features?.stop()]);
  });

  it("reads the in-process engine's hidden states for the readout's own tokens", async () => {
    expect(loadedCpuLibraries(features.pid)).toEqual(loadedCpuLibraries());
    for (const state of STATES) {
      const prompt = buildPrompt(state, QUESTIONS);
      const [ours, theirs] = await Promise.all([remote.prepare(prompt), local.prepare(prompt)]);
      const [read, reference] = [await remote.readFeatures!(ours), await local.readFeatures!(theirs)];
      expect(ours.inputTokens).toBe(theirs.inputTokens);
      expect(read.features).toHaveLength(QUESTIONS.length);
      read.features.forEach((vector, q) => {
        const expected = reference.features[q]!;
        expect(vector.length).toBe(expected.length);
        let worst = 0;
        let largest = 0;
        expected.forEach((value, i) => {
          worst = Math.max(worst, Math.abs(value - vector[i]!));
          largest = Math.max(largest, Math.abs(value));
        });
        measured.push(`${ours.inputTokens} input tokens, question ${q}: ${(worst / largest).toExponential(2)}`);
        expect(worst / largest).toBeLessThanOrEqual(BOUND);
      });
    }
  }, 300_000);

  it("is not offered without a features server", () => {
    const plain = createLlamaServerEngine(remoteOptions(answering.url));
    expect(plain.readFeatures).toBeUndefined();
    return plain.close();
  });

  it("refuses a features server that pools per token, or serves another model; one that is down is unavailable", async () => {
    const prompt = buildPrompt(STATES[0], QUESTIONS);
    const perToken = await startLlamaServer({
      model: smol.file!,
      slots: 1,
      contextSize: 4096,
      extraArgs: ["--embeddings", "--pooling", "none", "-ub", "4096"],
    });
    const other = gemma.file ? await startLlamaServer({ model: gemma.file, slots: 1, contextSize: 4096, extraArgs: FEATURES_ARGS }) : undefined;
    try {
      for (const [server, expected] of [
        [perToken, /2 vectors for 2 tokens: start it with --pooling last/],
        ...(other ? [[other, /serves another model .*n_embd 640, not 576/] as const] : []),
      ] as const) {
        const engine = engineOn(server.url);
        await (engine as { ready: Promise<void> }).ready;
        const read = engine.readFeatures!(await engine.prepare(prompt));
        await expect(read).rejects.toThrow(EngineFailedError);
        await expect(read).rejects.toThrow(expected);
        await engine.close();
      }
      const engine = engineOn(perToken.url);
      await (engine as { ready: Promise<void> }).ready;
      await perToken.kill();
      await expect(engine.readFeatures!(await engine.prepare(prompt))).rejects.toThrow(EngineUnavailableError);
      await engine.close();
    } finally {
      await Promise.all([perToken.stop(), other?.stop()]);
    }
  }, 300_000);

  it(
    "fits a task's level 2 heads through it and answers with them, configured from a models file as a server is",
    () =>
      expectDomainTaskOnLevel2("llama-server", {
        id: "smol-server",
        engine: "llama-server",
        url: answering.url,
        features_url: features.url,
        timeout_ms: 120_000,
      }),
    900_000,
  );
});
