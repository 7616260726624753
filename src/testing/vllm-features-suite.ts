import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVllmEngine } from "../engine/hf/vllm/engine.js";
import type { RemoteEngineOptions } from "../engine/remote/options.js";
import { EngineFailedError, type JudgmentEngine } from "../engine/types.js";
import { buildPrompt } from "../judgment/prompt.js";
import type { Question } from "../judgment/schema.js";
import { expectDomainTaskOnLevel2 } from "./domain-task-fit.js";
import { realModelsRequired } from "./real-models.js";
import { runVllmScript, VLLM_START_MS, type RealVllm } from "./vllm.js";

/**
 * Level 2 on vLLM: the hidden states from a second vLLM on the same folder, run as a pooling
 * model (engine/hf/vllm/features.ts), against the in-process engine's (proven to be the answer
 * position's final hidden state in engine/llama/features.real-models.test.ts): bf16 against
 * Q4_1, so the same direction, not the same bits (measured: cosine 0.9996–0.9998, the largest
 * entry gap 0.8–1.1% of the largest entry). Registered by real-vllm.test.ts before its last describe
 * kills the answering server; the pooling server is this suite's, stopped after it.
 */
export const POOLING_ARGS = '--runner pooling --convert embed --pooler-config {"pooling_type":"LAST","use_activation":false}';

const QUESTIONS: Question[] = [
  { type: "noul", instructions: "The sentence expresses a positive opinion.", criteria: null },
  {
    type: "choice",
    instructions: "What is the review sentence about?",
    criteria: { phone: "a mobile phone or a phone accessory", movie: "a film", restaurant: "a restaurant, its food or its service" },
  },
];
const STATES = ["The soup was cold and the waiter rude.", "A wonderful film, I cried twice. ".repeat(20)];

export interface RealVllmFeaturesContext {
  real(): RealVllm;
  local(): JudgmentEngine;
  options(overrides?: Partial<RemoteEngineOptions>): RemoteEngineOptions;
}

export function describeFeaturesOnRealVllm(context: RealVllmFeaturesContext): void {
  describe("level 2's hidden states from a second vLLM run as a pooling model", () => {
    let pooling: string | undefined;
    let engine: JudgmentEngine;
    const measured: string[] = [];

    beforeAll(async () => {
      const started = await runVllmScript(["serve", "features"], { VLLM_EXTRA_ARGS: POOLING_ARGS });
      if ("missing" in started) {
        if (realModelsRequired()) throw new Error(`the pooling vLLM is required here (CI) but did not start:\n${started.missing}`);
        console.warn(`skipping vLLM's level 2: ${started.missing}`);
        return;
      }
      pooling = started.out;
      engine = createVllmEngine(context.options({ featuresServer: { url: pooling, timeoutMs: 120_000 } }));
      await (engine as { ready?: Promise<void> }).ready;
    }, VLLM_START_MS);
    afterAll(async () => {
      if (measured.length > 0) console.log(`vLLM (bf16) hidden states against in-process (Q4_1):\n  ${measured.join("\n  ")}`);
      await engine?.close();
      if (pooling) await runVllmScript(["stop", "features"]);
    });

    it("reads the answer position's hidden state for the readout's own tokens, in the in-process engine's direction", async (test) => {
      if (!pooling) return test.skip();
      for (const state of STATES) {
        const prompt = buildPrompt(state, QUESTIONS);
        const [ours, theirs] = await Promise.all([engine.prepare(prompt), context.local().prepare(prompt)]);
        const [read, reference] = [await engine.readFeatures!(ours), await context.local().readFeatures!(theirs)];
        read.features.forEach((vector, q) => {
          const expected = reference.features[q]!;
          expect(vector.length).toBe(expected.length);
          let dot = 0;
          let worst = 0;
          let largest = 0;
          expected.forEach((value, i) => {
            dot += value * vector[i]!;
            worst = Math.max(worst, Math.abs(value - vector[i]!));
            largest = Math.max(largest, Math.abs(value));
          });
          const cosine = dot / (Math.hypot(...expected) * Math.hypot(...vector));
          measured.push(
            `${ours.inputTokens} input tokens, question ${q}: cosine ${cosine.toFixed(5)}, max |Δ| / max |h| ${(worst / largest).toExponential(2)}`,
          );
          expect(cosine).toBeGreaterThanOrEqual(0.995);
          expect(worst / largest).toBeLessThanOrEqual(0.05);
        });
      }
    });

    it("refuses a generating vLLM as its features server: a 502 model_failed for what needed it", async (test) => {
      if (!pooling) return test.skip();
      const wrong = createVllmEngine(context.options({ featuresServer: { url: context.real().url, timeoutMs: 120_000 } }));
      try {
        await (wrong as { ready?: Promise<void> }).ready;
        await expect(wrong.readFeatures!(await wrong.prepare(buildPrompt(STATES[0], QUESTIONS)))).rejects.toThrow(EngineFailedError);
      } finally {
        await wrong.close();
      }
    });

    it("fits a task's level 2 heads through it and answers with them, configured from a models file as a server is", async (test) => {
      if (!pooling) return test.skip();
      const real = context.real();
      await expectDomainTaskOnLevel2("vLLM", {
        id: "smol-vllm",
        engine: "vllm",
        url: real.url,
        features_url: pooling,
        tokenizer_config: path.join(real.folder, "tokenizer_config.json"),
        timeout_ms: 120_000,
      });
    }, 900_000);
  });
}
