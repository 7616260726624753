import type { Token } from "../../label-trie.js";
import { callJson, describe, type RemoteServer } from "../../remote/http.js";
import type { NodeReader } from "../../remote/readout.js";
import { checkedCandidates, malformed, okBody } from "../server.js";

/** vLLM's `MAX_LOGPROB_TOKEN_IDS`: a longer `logprob_token_ids` list is a 400. */
export const MAX_LOGPROB_TOKEN_IDS = 128;

const PATH = "/v1/completions";

/**
 * Reads candidates' raw log-probabilities with one `/v1/completions` call per node (per 128
 * candidates): the prompt as token ids, one generated token, `logprob_token_ids` naming the
 * candidates. vLLM's prefix cache makes the repeated prompt cheap.
 */
export function createVllmReader(server: RemoteServer, model: string, temperature: number, force?: Token): NodeReader {
  return {
    async read(tokens, candidates, signal) {
      const chunks: Token[][] = [];
      for (let i = 0; i < candidates.length; i += MAX_LOGPROB_TOKEN_IDS) chunks.push(candidates.slice(i, i + MAX_LOGPROB_TOKEN_IDS));
      const reads = await Promise.all(chunks.map((chunk) => readChunk(server, { model, temperature, force }, tokens, chunk, signal)));
      return new Map(reads.flatMap((read) => [...read]));
    },
  };
}

async function readChunk(
  server: RemoteServer,
  { model, temperature, force }: { model: string; temperature: number; force?: Token },
  tokens: Token[],
  candidates: Token[],
  signal: AbortSignal | undefined,
): Promise<Map<Token, number>> {
  const body = {
    model,
    prompt: tokens,
    max_tokens: 1,
    temperature,
    // A required switch: with logprob_token_ids it no longer selects a natural top-k.
    logprobs: 1,
    logprob_token_ids: candidates,
    return_tokens_as_token_ids: true,
    // Raw logprobs are taken before any logits processing, so this only picks the generated token.
    ...(force === undefined ? {} : { allowed_token_ids: [force] }),
  };
  const reply = okBody(server, PATH, await callJson(server, PATH, body, signal));
  const logprobs = (reply as { choices?: { logprobs?: { tokens?: unknown; top_logprobs?: unknown } }[] })?.choices?.[0]?.logprobs;
  const top = Array.isArray(logprobs?.top_logprobs) ? logprobs.top_logprobs[0] : undefined;
  const sampled = Array.isArray(logprobs?.tokens) ? tokenId(logprobs.tokens[0]) : undefined;
  if (typeof top !== "object" || top === null || Array.isArray(top) || sampled === undefined) {
    throw malformed(server, PATH, "no choices[0].logprobs with tokens and top_logprobs", reply);
  }
  const entries: [Token, number][] = Object.entries(top).map(([key, value]) => {
    const id = tokenId(key);
    if (id === undefined) throw malformed(server, PATH, `a top_logprobs key ${JSON.stringify(key)} that is not "token_id:N"`, reply);
    // vLLM writes −∞ as −9999.0 (JSON has no infinity); e^−9999 is 0 all the same.
    return [id, value as number];
  });
  // The response adds the sampled token to the ids asked for (vLLM PR #43463).
  return checkedCandidates(`${describe(server)}${PATH}`, "logprob_token_ids", entries, candidates, sampled);
}

/** "token_id:123" → 123 (what `return_tokens_as_token_ids` makes of every token). */
function tokenId(value: unknown): Token | undefined {
  const match = typeof value === "string" ? /^token_id:(\d+)$/.exec(value) : null;
  return match ? (Number(match[1]) as Token) : undefined;
}
