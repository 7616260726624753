import type { Token } from "node-llama-cpp";
import { logSoftmax, topTokens } from "./fixture-oracle.js";
import {
  badRequest,
  candidateLogProbs,
  modelsReply,
  startStandin,
  temperatureScale,
  tokenizeReply,
  type Standin,
  type StandinOptions,
  type StandinReply,
} from "./standin-server.js";

/** vLLM's MAX_LOGPROB_TOKEN_IDS. */
const MAX_IDS = 128;

/**
 * A stand-in for `vllm serve` (a build with `logprob_token_ids` on /v1/completions, PR #43463,
 * default `--logprobs-mode raw_logprobs`), computing its numbers with the fixture model. It
 * generates exactly one token (greedy), which is all the engine asks of it.
 */
export function startVllmStandin(options: StandinOptions = {}): Promise<Standin> {
  return startStandin(
    async ({ method, path, body }, standin) => {
      if (method === "GET" && path === "/health") return { status: 200, text: "" };
      if (method === "GET" && path === "/v1/models") return modelsReply(standin, "vllm");
      // vLLM's /server_info (served with VLLM_SERVER_DEV_MODE=1) includes its environment settings.
      if (method === "GET" && path === "/server_info") return { status: 200, json: { vllm_env: standin.deterministic ? { VLLM_BATCH_INVARIANT: "1" } : {} } };
      if (method === "POST" && path === "/tokenize") {
        const model = (body as { model?: unknown })?.model;
        if (model !== undefined && model !== standin.servedModelName) return notFound(model);
        const reply = tokenizeReply(standin, body);
        return reply.status === 200 ? { ...reply, json: { ...(reply.json as object), token_strs: null } } : reply;
      }
      if (method === "POST" && path === "/v1/completions") return completions(standin, (body ?? {}) as Record<string, unknown>);
      return { status: 404, json: { detail: "Not Found" } };
    },
    "/v1/completions",
    options,
  );
}

function notFound(model: unknown): StandinReply {
  return { status: 404, json: { error: { message: `The model \`${String(model)}\` does not exist.`, type: "NotFoundError", param: "model", code: 404 } } };
}

async function completions(standin: Standin, body: Record<string, unknown>): Promise<StandinReply> {
  const { oracle, fault } = standin;
  if (body.model !== undefined && body.model !== standin.servedModelName) return notFound(body.model);
  const prompt = typeof body.prompt === "string" ? oracle.tokenize(body.prompt, true) : body.prompt;
  if (!Array.isArray(prompt) || prompt.length === 0 || !prompt.every((t) => Number.isInteger(t) && t >= 0 && t < oracle.vocabSize)) {
    return badRequest("prompt must be text or a non-empty list of token ids in the vocabulary");
  }
  if ((body.max_tokens ?? 16) !== 1) return badRequest("this stand-in generates exactly one token: send max_tokens 1");
  const temperature = body.temperature ?? 1;
  if (typeof temperature !== "number" || temperature < 0) return badRequest("temperature must be a number ≥ 0");
  const logprobs = body.logprobs ?? null;
  if (logprobs !== null && (!Number.isInteger(logprobs) || (logprobs as number) < 0)) return badRequest("`logprobs` must be a positive value or -1.");
  // An old server's request model drops the unknown field without a word.
  const ids = fault === "ignores-ids" ? undefined : (body.logprob_token_ids ?? undefined);
  if (ids !== undefined) {
    if (!Array.isArray(ids) || ids.length === 0) return badRequest("`logprob_token_ids` must not be an empty list.");
    if (ids.length > MAX_IDS) return badRequest(`\`logprob_token_ids\` has ${ids.length} ids, more than ${MAX_IDS}`);
    if (!ids.every((t) => Number.isInteger(t) && t >= 0 && t < oracle.vocabSize)) return badRequest("`logprob_token_ids` holds an id outside the vocabulary");
    if (logprobs === null) return badRequest("when using `logprob_token_ids`, `logprobs` must be set.");
  }
  if (prompt.length + 1 > oracle.contextSize) {
    return badRequest(
      `This model's maximum context length is ${oracle.contextSize} tokens. However, you requested ${prompt.length + 1} tokens (${prompt.length} in the messages, 1 in the completion).`,
    );
  }
  const logits = await oracle.logits(prompt as Token[]);
  const sampling = { temperature, scalesByTemperature: false };
  const values = logSoftmax(logits, temperatureScale(sampling, fault));
  const allowed = body.allowed_token_ids;
  if (allowed !== undefined && allowed !== null && (!Array.isArray(allowed) || !allowed.every((t) => Number.isInteger(t) && t >= 0 && t < oracle.vocabSize))) {
    return badRequest("allowed_token_ids must be a list of ids in the vocabulary");
  }
  // Greedy over the allowed ids; the reported (raw) values are taken before that filter.
  const sampled =
    Array.isArray(allowed) && allowed.length > 0 ? (allowed as Token[]).reduce((a, b) => (values[b] > values[a] ? b : a)) : topTokens(values, 1)[0];
  const key = (id: Token) => (body.return_tokens_as_token_ids === true ? `token_id:${id}` : oracle.detokenize(id));
  // JSON has no −∞; vLLM writes −9999.0 instead.
  const json = (value: number) => Math.max(value, -9999);
  let choiceLogprobs: unknown = null;
  if (logprobs !== null) {
    // A renormalising server would include the sampled token in what it renormalises over.
    const over = fault === "processed-renormalised" && ids !== undefined && !(ids as Token[]).includes(sampled) ? [...(ids as Token[]), sampled] : ids;
    const entries = candidateLogProbs(logits, over as Token[] | undefined, sampling, Math.max(logprobs as number, 1), fault);
    // The sampled token comes back too, in addition to the ids asked for.
    if (!(ids as Token[] | undefined)?.includes(sampled) && !entries.some(([id]) => id === sampled)) entries.push([sampled, values[sampled]]);
    choiceLogprobs = {
      text_offset: [0],
      token_logprobs: [json(values[sampled])],
      tokens: [key(sampled)],
      top_logprobs: [Object.fromEntries(entries.map(([id, value]) => [key(id), json(value)]))],
    };
  }
  if (fault === "wrong-shape") choiceLogprobs = { tokens: [key(sampled)], top_logprobs: null };
  return {
    status: 200,
    json: {
      id: `cmpl-standin-${standin.calls.length}`,
      object: "text_completion",
      created: Math.floor(Date.now() / 1000),
      model: standin.servedModelName,
      choices: [{ index: 0, text: oracle.detokenize(sampled), logprobs: choiceLogprobs, finish_reason: "length", stop_reason: null, prompt_logprobs: null }],
      usage: { prompt_tokens: prompt.length, total_tokens: prompt.length + 1, completion_tokens: 1, prompt_tokens_details: null },
    },
  };
}
