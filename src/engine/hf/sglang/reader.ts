import type { Token } from "../../label-trie.js";
import { callJson, describe, type RemoteServer } from "../../remote/http.js";
import type { NodeReader } from "../../remote/readout.js";
import { checkedCandidates, malformed, okBody } from "../server.js";

const PATH = "/generate";

/** Sub-requests per /generate call: enough for every question of a request at once. */
export const MAX_BATCH = 64;

interface Pending {
  tokens: Token[];
  candidates: Token[];
  signal?: AbortSignal;
  resolve(read: Map<Token, number>): void;
  reject(error: unknown): void;
}

/**
 * Reads candidates' raw log-probabilities through SGLang's native /generate. Reads asked for in
 * the same turn of the event loop (every question's root, then every next trie level) go out
 * as one batched call, a list per field; the radix cache shares their common prefix.
 */
export function createSglangReader(server: RemoteServer, temperature: number): NodeReader {
  let queue: Pending[] = [];
  const flush = () => {
    const items = queue;
    queue = [];
    for (let i = 0; i < items.length; i += MAX_BATCH) void send(server, temperature, items.slice(i, i + MAX_BATCH));
  };
  return {
    read(tokens, candidates, signal) {
      return new Promise((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ tokens, candidates, signal, resolve, reject });
      });
    },
  };
}

async function send(server: RemoteServer, temperature: number, items: Pending[]): Promise<void> {
  // max_new_tokens 1 and temperature always sent: a default may come from the model's
  // generation config, and SGLang divides its logprobs by the temperature (0 counts as 1).
  // logprob_start_len −1: logprobs of the output only, which keeps the radix cache.
  const shared = { sampling_params: { max_new_tokens: 1, temperature }, return_logprob: true, logprob_start_len: -1 };
  const body =
    items.length === 1
      ? { input_ids: items[0].tokens, token_ids_logprob: items[0].candidates, ...shared }
      : { input_ids: items.map((item) => item.tokens), token_ids_logprob: items.map((item) => item.candidates), ...shared };
  const signals = [...new Set(items.map((item) => item.signal).filter((s): s is AbortSignal => s !== undefined))];
  try {
    const reply = okBody(server, PATH, await callJson(server, PATH, body, signals.length > 0 ? AbortSignal.any(signals) : undefined));
    const results = items.length === 1 ? [reply] : reply;
    if (!Array.isArray(results) || results.length !== items.length) {
      throw malformed(server, PATH, `not a list of ${items.length} results for ${items.length} sub-requests`, reply);
    }
    items.forEach((item, i) => {
      try {
        item.resolve(parseResult(server, results[i], item.candidates));
      } catch (error) {
        item.reject(error);
      }
    });
  } catch (error) {
    for (const item of items) item.reject(error);
  }
}

function parseResult(server: RemoteServer, result: unknown, candidates: Token[]): Map<Token, number> {
  const rows = (result as { meta_info?: { output_token_ids_logprobs?: unknown } })?.meta_info?.output_token_ids_logprobs;
  const first = Array.isArray(rows) ? rows[0] : undefined;
  if (!Array.isArray(first)) throw malformed(server, PATH, "no meta_info.output_token_ids_logprobs[0]", result);
  const entries: [Token, number][] = first.map((entry: unknown) => {
    // Each entry is [logprob, token id, token text or null].
    if (!Array.isArray(entry) || !Number.isInteger(entry[1]) || !(typeof entry[0] === "number" || entry[0] === null)) {
      throw malformed(server, PATH, "an output_token_ids_logprobs entry that is not [logprob, id, text]", result);
    }
    // SGLang answers with orjson, which writes a non-finite float as null: the −∞ of a token
    // the model rules out.
    return [entry[1] as Token, entry[0] === null ? -Infinity : entry[0]];
  });
  return checkedCandidates(`${describe(server)}${PATH}`, "token_ids_logprob", entries, candidates);
}
