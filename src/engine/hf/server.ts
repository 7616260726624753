/**
 * What vLLM and SGLang have in common: a Hugging Face tokenizer behind `/tokenize`, a model
 * list at `/v1/models`, `/health`, and a "logprobs of these ids" read whose every reply is
 * checked. (Shared by vllm/ and sglang/; it belongs in engine/remote/ — see the report.)
 */
import type { Token } from "../label-trie.js";
import { callJson, describe, quote, type JsonReply, type RemoteServer } from "../remote/http.js";
import type { RemoteTokenizer } from "../remote/prepare.js";
import { EngineFailedError, EngineUnavailableError } from "../types.js";

/** The body of a 2xx reply; a gateway's 502/503/504 is the server being away, anything else a failure. */
export function okBody(server: RemoteServer, path: string, reply: JsonReply): unknown {
  if (reply.status >= 200 && reply.status < 300) return reply.body;
  const what = `${describe(server)}${path} answered ${reply.status}: ${quote(reply.body)}`;
  if (reply.status === 502 || reply.status === 503 || reply.status === 504) throw new EngineUnavailableError(what);
  throw new EngineFailedError(what);
}

export function malformed(server: RemoteServer, path: string, what: string, body: unknown): EngineFailedError {
  return new EngineFailedError(`${describe(server)}${path} answered with ${what}: ${quote(body)}`);
}

/**
 * `/tokenize` {prompt, add_special_tokens: false} → {tokens}. An HF tokenizer has no switch to
 * read control-token text as plain text, so `special` cannot be honoured here: the caller
 * guards plain text first (`guardedTokenizer`).
 */
export function serverTokenizer(server: RemoteServer, extraFields: Record<string, unknown> = {}): RemoteTokenizer {
  return {
    async tokenize(text, _special, signal) {
      const reply = await callJson(server, "/tokenize", { ...extraFields, prompt: text, add_special_tokens: false }, signal);
      const body = okBody(server, "/tokenize", reply) as { tokens?: unknown };
      const tokens = body?.tokens;
      if (!Array.isArray(tokens) || !tokens.every((t) => Number.isInteger(t) && t >= 0)) {
        throw malformed(server, "/tokenize", "no token id list", body);
      }
      return tokens as Token[];
    },
  };
}

export interface ServedModel {
  name: string;
  /** The server's context length, when it says. */
  maxModelLen?: number;
}

/** GET /v1/models (both servers): the model to name in requests, and its context length. */
export async function servedModel(server: RemoteServer, wanted: string | undefined, signal?: AbortSignal): Promise<ServedModel> {
  const reply = await callJson(server, "/v1/models", undefined, signal, "GET");
  const body = okBody(server, "/v1/models", reply) as { data?: unknown };
  const models = Array.isArray(body?.data) ? (body.data as { id?: unknown; max_model_len?: unknown }[]) : undefined;
  if (!models || models.length === 0 || !models.every((m) => typeof m?.id === "string")) {
    throw malformed(server, "/v1/models", "no model list", body);
  }
  const model = wanted === undefined ? models[0] : models.find((m) => m.id === wanted);
  if (!model) {
    throw new EngineFailedError(
      `${describe(server)} does not serve ${JSON.stringify(wanted)} (it serves ${models.map((m) => JSON.stringify(m.id)).join(", ")})`,
    );
  }
  const maxModelLen = Number.isInteger(model.max_model_len) && (model.max_model_len as number) > 0 ? (model.max_model_len as number) : undefined;
  return { name: model.id as string, maxModelLen };
}

/** GET /health: its status code, or why the server cannot be reached. */
export async function pingHealth(server: RemoteServer, timeoutMs: number): Promise<{ status: number } | { unreachable: string }> {
  const headers: Record<string, string> = server.key ? { authorization: `Bearer ${server.key}` } : {};
  try {
    const response = await fetch(`${server.url}/health`, { headers, signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return { status: response.status };
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const reason = error instanceof Error && error.name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : String((cause as Error)?.message ?? cause);
    return { unreachable: `cannot reach ${describe(server)}/health: ${reason}` };
  }
}

/** Raw log-softmax values may exceed 0 or sum past 1 only by rounding (FP32 on the server). */
const ROUNDING = 1e-3;

/**
 * Checks one "logprobs of these ids" reply: every requested id present once, nothing else
 * (vLLM adds the sampled token, `extra`), every value a log-probability, and together no more
 * than probability 1. `field` names the request field a server ignoring it would drop.
 */
export function checkedCandidates(where: string, field: string, entries: [Token, number][], requested: Token[], extra?: Token): Map<Token, number> {
  const read = new Map<Token, number>();
  for (const [id, value] of entries) {
    if (typeof value !== "number" || Number.isNaN(value) || value === Infinity || value > ROUNDING) {
      throw new EngineFailedError(`${where} returned ${String(value)} as the log-probability of token ${id}`);
    }
    if (read.has(id) && read.get(id) !== value) throw new EngineFailedError(`${where} returned token ${id} twice with different values`);
    read.set(id, Math.min(value, 0));
  }
  const wanted = new Set(requested);
  const missing = requested.filter((id) => !read.has(id));
  const unasked = [...read.keys()].filter((id) => !wanted.has(id) && id !== extra);
  if (missing.length > 0 || unasked.length > 0) {
    const parts = [
      missing.length > 0 ? `omitted requested token(s) ${ids(missing)}` : "",
      unasked.length > 0 ? `returned token(s) ${ids(unasked)} it was not asked for` : "",
    ];
    throw new EngineFailedError(`${where} ${parts.filter(Boolean).join(" and ")}: it does not honour ${field}`);
  }
  const total = logSumExp([...read.values()]);
  if (total > ROUNDING) {
    throw new EngineFailedError(`${where} returned log-probabilities that add up to probability ${Math.exp(total).toFixed(6)} > 1`);
  }
  if (extra !== undefined && !wanted.has(extra)) read.delete(extra);
  return read;
}

function ids(list: Token[]): string {
  return list.length > 8 ? `${list.slice(0, 8).join(", ")}, … (${list.length})` : list.join(", ");
}

export function logSumExp(values: number[]): number {
  const max = Math.max(...values);
  if (max === -Infinity) return -Infinity;
  return max + Math.log(values.reduce((sum, v) => sum + Math.exp(v - max), 0));
}
