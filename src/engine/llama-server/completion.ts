import type { Token } from "../label-trie.js";
import { callJson, describe, quote, type JsonReply, type RemoteServer } from "../remote/http.js";
import { EngineFailedError, EngineUnavailableError } from "../types.js";

/**
 * llama-server's `POST /completion` as a source of raw next-token log-probabilities.
 *
 * Every read forces one token with `logit_bias` +100 and generates exactly it: the bias acts on
 * the sampler's copy of the logits, while `n_probs` reports the raw full-vocabulary softmax, so
 * forcing costs nothing in exactness and buys two things: the forced token's own raw logprob
 * comes back in `completion_probabilities[0].logprob` whatever its rank, and the reply always
 * has an entry (llama-server drops a generated token that ends in an incomplete UTF-8 sequence,
 * e.g. a byte-fallback token, and would then return no probabilities at all).
 */
export const FORCE_BIAS = 100;

export interface CompletionRequest {
  tokens: readonly Token[];
  /** How many of the top raw log-probabilities to return (1 = only the forced token matters). */
  nProbs: number;
  /** The token generated (and so read exactly), whatever its rank. */
  force: Token;
  slot: number;
  /** False evaluates the whole prompt afresh (the start-up probe's cold read). */
  cachePrompt?: boolean;
}

export interface CompletionRead {
  /** The forced token's raw log-probability. */
  logProb: number;
  /** The raw top-`nProbs` list, by id. */
  top: Map<Token, number>;
}

/**
 * Evaluates `tokens` into the slot's cache and reads nothing (`n_predict` 0): the walk's
 * rollback of a slot to the start of a prompt (see walk.ts).
 */
export async function fillCache(server: RemoteServer, tokens: readonly Token[], slot: number, signal?: AbortSignal): Promise<void> {
  const reply = await callJson(server, "/completion", { prompt: tokens, n_predict: 0, cache_prompt: true, id_slot: slot }, signal);
  checkStatus(reply, `${describe(server)}/completion`);
}

export async function readCompletion(server: RemoteServer, request: CompletionRequest, signal?: AbortSignal): Promise<CompletionRead> {
  const reply = await callJson(
    server,
    "/completion",
    {
      prompt: request.tokens,
      n_predict: 1,
      n_probs: request.nProbs,
      temperature: 0,
      cache_prompt: request.cachePrompt ?? true,
      id_slot: request.slot,
      post_sampling_probs: false,
      logit_bias: [[request.force, FORCE_BIAS]],
    },
    signal,
  );
  const where = `${describe(server)}/completion`;
  checkStatus(reply, where);
  return parseCompletion(reply.body, request.force, where);
}

/** llama-server answers 503 while it loads its model: unavailable, and worth waiting for. */
export class ServerLoadingError extends EngineUnavailableError {
  override name = "ServerLoadingError";
}

/** 503 is llama-server loading its model (unavailable); any other non-200 is a failure. */
export function checkStatus(reply: JsonReply, where: string): void {
  if (reply.status === 503) throw new ServerLoadingError(`${where} answered 503, the model is not loaded: ${quote(reply.body)}`);
  if (reply.status !== 200) throw new EngineFailedError(`${where} answered ${reply.status}: ${quote(reply.body)}`);
}

/** Checks the reply's shape and that the server generated the forced token; the numbers are checked by the readout. */
export function parseCompletion(body: unknown, force: Token, where: string): CompletionRead {
  const fail = (why: string): never => {
    throw new EngineFailedError(`${where} ${why}: ${quote(body)}`);
  };
  const probs = (body as { completion_probabilities?: unknown } | undefined)?.completion_probabilities;
  if (!Array.isArray(probs) || probs.length === 0) return fail("returned no completion_probabilities");
  const first = probs[0] as Record<string, unknown>;
  if (typeof first !== "object" || first === null) return fail("returned a malformed completion_probabilities entry");
  if (!("top_logprobs" in first) && ("top_probs" in first || "prob" in first)) {
    return fail("returned post-sampling probabilities (it ignores post_sampling_probs: false)");
  }
  if (!isTokenId(first.id)) return fail("returned an entry without a token id");
  if (first.id !== force) return fail(`generated token ${String(first.id)}, not the forced ${force} (it ignores logit_bias)`);
  if (typeof first.logprob !== "number") return fail("returned an entry without a logprob");
  if (!Array.isArray(first.top_logprobs)) return fail("returned no top_logprobs");
  const top = new Map<Token, number>();
  for (const entry of first.top_logprobs as Array<Record<string, unknown>>) {
    if (!entry || !isTokenId(entry.id) || typeof entry.logprob !== "number") return fail("returned a top_logprobs entry without an id or a logprob");
    top.set(entry.id as Token, entry.logprob);
  }
  const listed = top.get(force);
  // The same token read twice in one reply (as generated and in the list) comes from one softmax.
  if (listed !== undefined && listed !== first.logprob) return fail(`reported two log-probabilities for token ${force}`);
  return { logProb: first.logprob, top };
}

function isTokenId(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0;
}
