/**
 * JUDGE_ENGINE=vllm: label probabilities from a vLLM server's OpenAI-compatible completions API.
 *
 * Wire format (vLLM with PR #43463, "Expose logprob_token_ids on Python OpenAI endpoints",
 * merged 2026-07-13, in every release after it; started with the default
 * `--logprobs-mode raw_logprobs`):
 * - POST /v1/completions {model, prompt: [token ids], max_tokens: 1, temperature: 0, logprobs: 1,
 *   logprob_token_ids: [≤ 128 ids], return_tokens_as_token_ids: true} →
 *   choices[0].logprobs.top_logprobs[0] = {"token_id:N": raw logprob} for the ids asked for plus
 *   the sampled token (tokens[0]);
 * - POST /tokenize {model, prompt, add_special_tokens: false} → {tokens, count, max_model_len};
 * - GET /v1/models → data[].id, max_model_len; GET /health → 200 when up.
 * Older builds accept and silently drop `logprob_token_ids` (their request models ignore unknown
 * fields) and answer the natural top-k: the start-up probe refuses them. The probe also sends
 * `allowed_token_ids` once, to choose the generated token (raw logprobs are read before it acts).
 */
import type { RemoteEngineOptions } from "../../remote/options.js";
import type { JudgmentEngine } from "../../types.js";
import { createHfServerEngine } from "../engine.js";
import { createVllmFeaturesReader } from "./features.js";
import { createVllmReader } from "./reader.js";

export function createVllmEngine(options: RemoteEngineOptions): JudgmentEngine {
  return createHfServerEngine(options, {
    kind: "vllm",
    idsField: "logprob_token_ids",
    tokenizeFields: (model) => ({ model }),
    createReader: (model, temperature, force) => createVllmReader(options.server, model, temperature, force),
    ...(options.featuresServer && { features: createVllmFeaturesReader(options.server, options.featuresServer) }),
  });
}
