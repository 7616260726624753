/**
 * JUDGE_ENGINE=sglang: label probabilities from an SGLang server's native API.
 *
 * Wire format (SGLang 0.5.x, as of 0.5.12: `token_ids_logprob` on /generate dates from the 0.4
 * series, /tokenize from the 0.5 one):
 * - POST /generate {input_ids, sampling_params: {max_new_tokens: 1, temperature: 0},
 *   return_logprob: true, token_ids_logprob, logprob_start_len: -1}, each field a list for a
 *   batch → meta_info.output_token_ids_logprobs[0] = [[logprob, id, text|null], ...] for
 *   exactly the ids asked for (one result, or a list of them in order for a batch);
 * - POST /tokenize {prompt, add_special_tokens: false} → {tokens, count, max_model_len};
 * - GET /v1/models → data[].id (the served model name); GET /health → 200 when up.
 * SGLang's logprobs are divided by the request's temperature (0 counts as 1): every request
 * sends temperature 0, and the start-up probe refuses a server whose values are processed.
 */
import type { RemoteEngineOptions } from "../../remote/options.js";
import type { JudgmentEngine } from "../../types.js";
import { createHfServerEngine } from "../engine.js";
import { createSglangReader } from "./reader.js";

export function createSglangEngine(options: RemoteEngineOptions): JudgmentEngine {
  return createHfServerEngine(options, {
    kind: "sglang",
    idsField: "token_ids_logprob",
    tokenizeFields: () => ({}),
    // SGLang's reply holds only the ids asked for: nothing to force.
    createReader: (_model, temperature) => createSglangReader(options.server, temperature),
  });
}
