import type { JudgmentPrompt } from "../../../judgment/prompt.js";
import { describe, quote } from "../../remote/http.js";
import type { RemoteEngineOptions } from "../../remote/options.js";
import {
  EngineFailedError,
  EngineUnavailableError,
  UpstreamRejectedError,
  throwIfAborted,
  type EngineResult,
  type EngineStatus,
  type JudgmentEngine,
  type PreparedJudgment,
} from "../../types.js";
import { createTransport, type UpstreamReply } from "./transport.js";
import { prepareUpstreamRequest, SystemOnePrepared } from "./upstream-request.js";
import { readUpstreamAnswers } from "./validation.js";
import { messageOf } from "../../../error-message.js";

/**
 * The System One gateway: forwards the request's questions to any server that speaks
 * `POST /v1/systemone` (another instance of this service, vLLM, SGLang, a hosted one) and keeps
 * keys, plans, limits, billing, idempotency and calibration here. It cannot tokenise, so it
 * holds an upper bound (`inputTokensUpperBound`) and reports the upstream's usage, never above it.
 *
 * One upstream call per request and no retries of our own, so no `Idempotency-Key` is sent:
 * there is nothing for one to deduplicate. A client's retry is a new request here, replayed from
 * our own idempotency store when the client sent a key and the first attempt was answered.
 */

/** The model name sent upstream unless JUDGE_ENGINE_MODEL names one: every ecosystem server accepts it. */
export const DEFAULT_UPSTREAM_MODEL = "jev-latest";
/** /health and /v1/models are asked with at most this timeout, so our /health answers promptly. */
export const PROBE_TIMEOUT_MS = 2_000;
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

export function createSystemOneEngine(options: RemoteEngineOptions): JudgmentEngine & { ready: Promise<void> } {
  const { server } = options;
  const where = describe(server);
  const transport = createTransport(server);
  const upstreamModel = options.upstreamModel ?? DEFAULT_UPSTREAM_MODEL;
  const probeTimeoutMs = Math.min(server.timeoutMs, PROBE_TIMEOUT_MS);
  let modelId = options.modelId ?? options.upstreamModel;
  let closed = false;
  // Cleared for good once the upstream refuses the field (a strict schema): its probabilities are used then.
  let askLogits = true;
  let wake: (() => void) | undefined;
  // Whether the upstream takes our key: unknown until asked once; refused (why) once it said 401/403.
  let key: KeyState = { state: "unknown" };

  /** Our key must never reach a message, whatever the upstream echoes. */
  const scrub = (text: string) => (server.key ? text.split(server.key).join("[key]") : text);

  const nameModel = async (signal?: AbortSignal): Promise<string> => {
    if (modelId !== undefined) return modelId;
    const reply = await transport.call("GET", "/v1/models", undefined, { signal, timeoutMs: probeTimeoutMs });
    const first = reply.status === 200 ? firstModel(parseOrUndefined(reply.text)) : undefined;
    if (!first) throw new EngineUnavailableError(`${where}/v1/models answered ${reply.status} without a model name: ${scrub(quote(reply.text))}`);
    return (modelId = first);
  };

  const status = async (): Promise<EngineStatus> => {
    if (closed) return { state: "failed", detail: "engine closed" };
    try {
      const reply = await transport.call("GET", "/health", undefined, { timeoutMs: probeTimeoutMs });
      if (reply.status !== 200) return unhealthy(where, reply, scrub);
      await nameModel();
      const known = key.state === "accepted" ? key : await probeKey();
      return known.state === "refused" ? { state: "failed", detail: known.detail } : { state: "ready" };
    } catch (error) {
      return { state: "failed", detail: scrub(messageOf(error)) };
    }
  };

  /**
   * /health and /v1/models take no key, so the key is proven on the endpoint that needs it, with
   * a body every server refuses as invalid (never billed): 401/403 is a refused key, anything
   * else is not. Asked until the key is accepted once, and again after any request saw it refused.
   */
  const probeKey = async (): Promise<KeyState> => {
    const reply = await transport.call("POST", "/v1/systemone", KEY_PROBE_BODY, { timeoutMs: probeTimeoutMs });
    key = isKeyRefusal(reply.status) ? { state: "refused", detail: keyRefusal(where, reply, scrub) } : { state: "accepted" };
    return key;
  };

  // Ready once the upstream first says it is healthy and the model has a name; until then the
  // probe is repeated with backoff, and status() says what is wrong.
  const ready = (async () => {
    for (let delay = FIRST_RETRY_MS; !closed; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
      // A refused key is known for sure: waiting longer would not change it, /health says it.
      if ((await status()).state === "ready" || (key as KeyState).state === "refused") return;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, delay).unref();
      });
    }
  })();

  return {
    get modelId() {
      return modelId ?? upstreamModel;
    },
    description: { kind: "systemone", backend: where },
    ready,
    status,
    async prepare(prompt: JudgmentPrompt, signal?: AbortSignal): Promise<PreparedJudgment> {
      throwIfAborted(signal);
      const prepared = prepareUpstreamRequest(prompt, {
        model: upstreamModel,
        limits: options.upstreamLimits,
        maxRequestTokens: options.maxRequestTokens,
      });
      // A response must name the model: one that is not known yet is asked for now, never guessed.
      await nameModel(signal);
      return prepared;
    },
    async evaluate(prepared: PreparedJudgment, signal?: AbortSignal): Promise<EngineResult> {
      if (!(prepared instanceof SystemOnePrepared)) throw new Error("evaluate() takes what this engine's prepare() returned");
      throwIfAborted(signal);
      const started = performance.now();
      const post = (body: string) => transport.call("POST", "/v1/systemone", body, { signal, timeoutMs: server.timeoutMs });
      let reply = await post(askLogits ? prepared.body : prepared.bodyWithoutLogits());
      if (askLogits && refusesLogitsField(reply)) {
        // Refused, so not billed upstream: asking again without the extension cannot bill twice.
        reply = await post(prepared.bodyWithoutLogits());
        // Only a request the upstream takes without the field proves it was the field it refused.
        if (reply.status === 200) askLogits = false;
      }
      const elapsedMs = performance.now() - started;
      if (isKeyRefusal(reply.status)) key = { state: "refused", detail: keyRefusal(where, reply, scrub) };
      if (reply.status !== 200) throw refusal(where, reply, scrub);
      key = { state: "accepted" };
      const body = parseOrUndefined(reply.text);
      if (body === undefined) throw new EngineFailedError(`${where}/v1/systemone answered 200 with a body that is not JSON: ${scrub(quote(reply.text, 120))}`);
      let answers;
      try {
        answers = readUpstreamAnswers(body, prepared.expected);
      } catch (error) {
        if (error instanceof EngineFailedError) error.message = scrub(`${where}: ${error.message}`);
        throw error;
      }
      return {
        labelLogProbs: answers.labelLogProbs,
        // Never above the hold: an upstream counting more than the bound is charged at the bound.
        inputTokens: Math.min(answers.inputTokens, prepared.inputTokens),
        timingMs: answers.timingMs ?? elapsedMs,
      };
    },
    async close() {
      closed = true;
      wake?.();
      transport.close();
    },
  };
}

/**
 * What an upstream's non-200 means here. Its 4xx about the request is the client's to fix (400
 * upstream_rejected, its message quoted); the rest is ours (502, uncharged): our key or account
 * at the upstream, its rate limit, its failure.
 */
export function refusal(where: string, reply: UpstreamReply, scrub: (text: string) => string): Error {
  const said = scrub(bodyMessage(reply.text));
  const at = `${where}/v1/systemone answered ${reply.status}`;
  switch (reply.status) {
    case 400:
    case 413:
    case 422:
      // The upstream knows the questions by the ids we gave them, which the client never chose.
      return new UpstreamRejectedError(
        `the upstream server refused the request: ${said}${/\bq\d+\b/.test(said) ? " (it numbers the questions q1, q2, … in request order)" : ""}`,
      );
    case 401:
    case 403:
      return new EngineUnavailableError(keyRefusal(where, reply, scrub), UPSTREAM_UNAVAILABLE);
    case 402:
      return new EngineUnavailableError(`${at}: this gateway's upstream account cannot pay: ${said}`, UPSTREAM_UNAVAILABLE);
    case 404:
      return new EngineUnavailableError(`${at}: no System One endpoint there (check JUDGE_ENGINE_URL)`, UPSTREAM_UNAVAILABLE);
    case 408:
    case 429:
    case 502:
    case 503:
    case 504:
      return new EngineUnavailableError(`${at}: ${said}`);
    default:
      return new EngineFailedError(`${at}: ${said}`);
  }
}

/** What an API client hears of the gateway's own misconfiguration: that it is not the client's fault, and no more. */
const UPSTREAM_UNAVAILABLE = "the model's server is unavailable; nothing was charged";

type KeyState = { state: "unknown" | "accepted" } | { state: "refused"; detail: string };

/** The key probe's body: no questions, so every System One server refuses it as invalid, after checking the key. */
export const KEY_PROBE_BODY = "{}";

const isKeyRefusal = (status: number) => status === 401 || status === 403;

/** For the operator (/health, the log): which upstream refused the key, and which setting holds it. */
function keyRefusal(where: string, reply: UpstreamReply, scrub: (text: string) => string): string {
  return `${where}/v1/systemone answered ${reply.status}: it refused this gateway's key (check JUDGE_ENGINE_KEY): ${scrub(bodyMessage(reply.text))}`;
}

/** A strict upstream's refusal of the unknown field (pydantic's "extra_forbidden", for one), not of the request. */
function refusesLogitsField(reply: UpstreamReply): boolean {
  return (reply.status === 400 || reply.status === 422) && reply.text.includes("include_logits");
}

function unhealthy(where: string, reply: UpstreamReply, scrub: (text: string) => string): EngineStatus {
  const body = parseOrUndefined(reply.text) as { status?: unknown } | undefined;
  const said = scrub(bodyMessage(reply.text));
  const loading = reply.status === 503 && (body?.status === "loading" || /loading/i.test(said));
  return loading
    ? { state: "loading", detail: `${where} is loading: ${said}` }
    : { state: "failed", detail: `${where}/health answered ${reply.status}: ${said}` };
}

/** The error text of a body in any of the ecosystem's shapes: {error}, {detail}, {detail: {message}}, {message}, {error: {message}}. */
export function bodyMessage(text: string): string {
  const body = parseOrUndefined(text) as Record<string, unknown> | undefined;
  const candidates = [body?.error, body?.detail, body?.message];
  for (const candidate of candidates) {
    if (typeof candidate === "string" && candidate.trim() !== "") return quote(candidate);
    const nested = (candidate as { message?: unknown } | null | undefined)?.message;
    if (typeof nested === "string" && nested.trim() !== "") return quote(nested);
  }
  return text.trim() === "" ? "(no message)" : quote(text);
}

/** The first model of `{"models": [{"name"}]}` (the ecosystem's) or `{"data": [{"id"}]}` (OpenAI's). */
function firstModel(body: unknown): string | undefined {
  const { models, data } = (body ?? {}) as { models?: { name?: unknown }[]; data?: { id?: unknown }[] };
  const name = Array.isArray(models) ? models[0]?.name : Array.isArray(data) ? data[0]?.id : undefined;
  return typeof name === "string" && name !== "" ? name : undefined;
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
