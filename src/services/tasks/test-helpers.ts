import type { EngineFeatures, EngineResult, JudgmentEngine, PreparedJudgment } from "../../engine/types.js";
import { NEUTRAL_TEMPERATURES } from "../../judgment/answers.js";
import type { JudgmentPrompt } from "../../judgment/prompt.js";
import type { Payer } from "../billing.js";
import type { JudgmentRequest, ModelChoice } from "../judging/request.js";

/**
 * A fake engine whose readout knows nothing (every label equally likely) while its "hidden state"
 * carries the answer: a state "yes …" or "no …" gives a feature vector that tells them apart.
 * A task's level-2 head should learn that, and the plain readout cannot.
 */
export function informativeEngine(modelId = "fake", options: { tokens?: number } = {}) {
  const tokens = options.tokens ?? 10;
  let reads = 0;
  let featureReads = 0;
  type Prepared = PreparedJudgment & { prompt: JudgmentPrompt };
  const engine: JudgmentEngine = {
    modelId,
    description: { kind: "llama", backend: "test" },
    status: () => ({ state: "ready" }),
    async prepare(prompt) {
      return { inputTokens: tokens * prompt.questions.length, inputTokensExact: true, prompt } as Prepared;
    },
    async evaluate(prepared): Promise<EngineResult> {
      reads++;
      const { prompt } = prepared as Prepared;
      const labelLogProbs = (prompt.source?.questions ?? []).map((q) => {
        const k = q.type === "choice" ? Object.keys(q.criteria).length : q.type === "noul" ? 2 : q.criteria.length;
        return Array.from({ length: k }, () => -Math.log(k));
      });
      return { labelLogProbs, inputTokens: prepared.inputTokens, timingMs: 1 };
    },
    async readFeatures(prepared): Promise<EngineFeatures> {
      featureReads++;
      const { prompt } = prepared as Prepared;
      const text = String(prompt.source?.state ?? "");
      const yes = text.startsWith("yes") ? 1 : -1;
      // A second, uninformative coordinate from the text's length, so the head has to pick.
      const features = (prompt.source?.questions ?? []).map(() => Float32Array.from([yes, (text.length % 7) / 7 - 0.5, 0.25]));
      return { features, timingMs: 1 };
    },
    close: async () => undefined,
  };
  return { engine, reads: () => reads, featureReads: () => featureReads };
}

export const modelChoice = (engine: JudgmentEngine, source = "fake:weights"): ModelChoice => ({
  id: engine.modelId,
  engine,
  multiplierMilli: 1000,
  temperatures: () => NEUTRAL_TEMPERATURES,
  source,
});

/** `n` examples of one noul question, half "yes", half "no", in the JSON body shape. */
export function yesNoTask(name: string, n: number) {
  return {
    name,
    questions: { agrees: { type: "noul", instructions: "The speaker agrees." } },
    examples: Array.from({ length: n }, (_, i) => ({ state: `${i % 2 === 0 ? "yes" : "no"} ${"x".repeat(i % 5)}`, gold: { agrees: i % 2 === 0 } })),
  };
}

/** A one-question request to judge(): "yes, quite" asked whether the speaker agrees (yesNoTask's question), with `extra` over it. */
export function agreesRequest(caller: Payer, extra: Partial<JudgmentRequest> = {}): JudgmentRequest {
  return {
    state: "yes, quite",
    ids: ["agrees"],
    questions: [{ type: "noul", instructions: "The speaker agrees." }],
    includeLogits: false,
    debias: "none",
    caller,
    requestId: `req-${Math.random()}`,
    idempotencyKey: undefined,
    bodyDigest: "d",
    signal: new AbortController().signal,
    models: [],
    ...extra,
  };
}
