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

/**
 * A stand-in for SGLang's native server (`/generate` with `token_ids_logprob`), computing its
 * numbers with the fixture model. Like SGLang it reports log-softmax(logits / temperature)
 * (greedy counts as temperature 1) and takes a list per field for a batch. It generates exactly
 * one token (greedy), which is all the engine asks of it.
 */
export function startSglangStandin(options: StandinOptions = {}): Promise<Standin> {
  return startStandin(
    async ({ method, path, body }, standin) => {
      if (method === "GET" && path === "/health") return { status: 200, text: "" };
      if (method === "GET" && path === "/v1/models") return modelsReply(standin, "sglang");
      // SGLang reports its server arguments; --enable-deterministic-inference among them.
      if (method === "GET" && path === "/get_server_info")
        return { status: 200, json: { enable_deterministic_inference: standin.deterministic, attention_backend: "triton" } };
      if (method === "GET" && path === "/get_model_info") {
        return { status: 200, json: { model_path: standin.servedModelName, tokenizer_path: standin.servedModelName, is_generation: true } };
      }
      if (method === "POST" && path === "/tokenize") return tokenizeReply(standin, body);
      if (method === "POST" && path === "/generate") return generate(standin, (body ?? {}) as Record<string, unknown>);
      return { status: 404, json: { detail: "Not Found" } };
    },
    "/generate",
    options,
  );
}

interface SubRequest {
  inputIds: Token[];
  sampling: Record<string, unknown>;
  returnLogprob: boolean;
  tokenIds?: Token[];
  topK: number;
}

async function generate(standin: Standin, body: Record<string, unknown>): Promise<StandinReply> {
  const batch = Array.isArray(body.input_ids) && Array.isArray(body.input_ids[0]);
  const inputs = (batch ? body.input_ids : [body.input_ids]) as unknown[];
  if (!Array.isArray(inputs) || inputs.some((ids) => !validIds(ids, standin.oracle.vocabSize))) {
    return badRequest("input_ids must be a list of token ids, or a list of such lists");
  }
  // A field is one value for every sub-request, or (in a batch) a list of them.
  const field = <T>(name: string, i: number, isList: (value: unknown[]) => boolean): T | undefined => {
    const value = body[name];
    return (batch && Array.isArray(value) && isList(value) ? value[i] : value) as T | undefined;
  };
  const requests: SubRequest[] = inputs.map((ids, i) => ({
    inputIds: ids as Token[],
    sampling: field<Record<string, unknown>>("sampling_params", i, () => true) ?? {},
    returnLogprob: field<boolean>("return_logprob", i, () => true) ?? false,
    tokenIds: field<Token[]>("token_ids_logprob", i, (value) => Array.isArray(value[0])) ?? undefined,
    topK: field<number>("top_logprobs_num", i, () => true) ?? 0,
  }));
  for (const request of requests) {
    if ((request.sampling.max_new_tokens ?? 128) !== 1) return badRequest("this stand-in generates exactly one token: send max_new_tokens 1");
    if (request.tokenIds !== undefined && !validIds(request.tokenIds, standin.oracle.vocabSize))
      return badRequest("token_ids_logprob holds an id outside the vocabulary");
    if (request.inputIds.length + 1 > standin.oracle.contextSize) {
      return badRequest(`The input (${request.inputIds.length} tokens) is longer than the model's context length (${standin.oracle.contextSize} tokens).`);
    }
  }
  const results = [];
  for (const request of requests) results.push(await result(standin, request));
  return { status: 200, json: batch ? results : results[0] };
}

async function result(standin: Standin, request: SubRequest) {
  const { oracle, fault } = standin;
  const temperature = typeof request.sampling.temperature === "number" ? request.sampling.temperature : 1;
  const sampling = { temperature, scalesByTemperature: true };
  const logits = await oracle.logits(request.inputIds);
  const values = logSoftmax(logits, temperatureScale(sampling, fault));
  const sampled = topTokens(values, 1)[0];
  // SGLang answers with orjson, which writes −∞ (and NaN) as null.
  const triple = ([id, value]: [Token, number]) => [Number.isFinite(value) ? value : null, id, null];
  const meta: Record<string, unknown> = {
    id: `standin-${standin.calls.length}`,
    finish_reason: { type: "length", length: 1 },
    prompt_tokens: request.inputIds.length,
    completion_tokens: 1,
    cached_tokens: 0,
  };
  if (request.returnLogprob) {
    meta.output_token_logprobs = [triple([sampled, values[sampled]])];
    meta.output_top_logprobs = [request.topK > 0 ? topTokens(values, request.topK).map((id) => triple([id, values[id]])) : null];
    // An old server knows no token_ids_logprob and answers its natural top 5 in its place.
    const asked = fault === "ignores-ids" ? [] : request.tokenIds;
    meta.output_token_ids_logprobs =
      asked === undefined ? null : [candidateLogProbs(logits, asked.length > 0 ? asked : undefined, sampling, 5, fault).map(triple)];
    if (fault === "wrong-shape") delete meta.output_token_ids_logprobs;
  }
  return { text: oracle.detokenize(sampled), output_ids: [sampled], meta_info: meta };
}

function validIds(ids: unknown, vocabSize: number): boolean {
  return Array.isArray(ids) && ids.length > 0 && ids.every((t) => Number.isInteger(t) && t >= 0 && t < vocabSize);
}
