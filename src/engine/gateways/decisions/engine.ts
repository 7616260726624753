import type { JudgmentPrompt } from "../../../judgment/prompt.js";
import { describe, quote } from "../../remote/http.js";
import type { RemoteEngineOptions } from "../../remote/options.js";
import { PROBE_TIMEOUT_MS } from "../systemone/engine.js";
import { createTransport } from "../systemone/transport.js";
import {
  EngineFailedError,
  EngineUnavailableError,
  throwIfAborted,
  type EngineResult,
  type EngineStatus,
  type JudgmentEngine,
  type PreparedJudgment,
} from "../../types.js";
import { DecisionsPrepared, DEFAULT_DECISIONS_MODEL, prepareDecisionsRequest, type DecisionsCall } from "./request.js";
import { probeStatus, UPSTREAM_FAILED, UPSTREAM_UNAVAILABLE, UPSTREAM_UNUSABLE, upstreamRefusal } from "./upstream-errors.js";
import { readDecisionsAnswers } from "./validation.js";
import { messageOf } from "../../../error-message.js";

/**
 * The decisions gateway: answers the request's questions by asking any server of OpenAI's
 * Decisions format (`POST /v1/decisions`: vLLM 0.33, OpenAI's hosted service, another instance
 * of this service), and keeps keys, plans, limits, billing, idempotency and calibration here.
 * Like the System One gateway it cannot tokenise, so it holds an upper bound and charges the
 * upstream's validated `usage.input_tokens`, never above the bound; it never retries (a retry
 * could be billed twice upstream), and an upstream that refuses, fails or answers something
 * that fails a check costs the client nothing.
 */

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

export function createDecisionsEngine(options: RemoteEngineOptions): JudgmentEngine & { ready: Promise<void> } {
  const { server } = options;
  const where = describe(server);
  // The SDKs' baseURL ends in /v1; the other engines' URLs are the root. Either is taken.
  const path = /\/v1$/.test(where) ? "/decisions" : "/v1/decisions";
  const at = `${where}${path}`;
  const transport = createTransport(server);
  const upstreamModel = options.upstreamModel ?? DEFAULT_DECISIONS_MODEL;
  const modelId = options.modelId ?? upstreamModel;
  const probeBody = JSON.stringify({ model: upstreamModel });
  const probeTimeoutMs = Math.min(server.timeoutMs, PROBE_TIMEOUT_MS);
  let closed = false;
  let wake: (() => void) | undefined;
  // The last probe's refusal was of our settings (key, account, URL, model): asking again will not change it.
  let refusedSettings = false;

  /** Our key must never reach a message, whatever the upstream echoes. */
  const scrub = (text: string) => (server.key ? text.split(server.key).join("[key]") : text);

  /** Each /health asks once: reachable, the endpoint there, our key accepted (see probeStatus). */
  const status = async (): Promise<EngineStatus> => {
    if (closed) return { state: "failed", detail: "engine closed" };
    try {
      const reply = await transport.call("POST", path, probeBody, { timeoutMs: probeTimeoutMs });
      const known = probeStatus(at, reply, scrub);
      refusedSettings = known.state === "failed" && reply.status < 500 && reply.status !== 408;
      return known;
    } catch (error) {
      return { state: "failed", detail: scrub(messageOf(error)) };
    }
  };

  // Ready once the upstream first answers the probe as it should; until then it is asked again
  // with backoff (a refused key, a wrong URL or model end the wait: /health says which).
  const ready = (async () => {
    for (let delay = FIRST_RETRY_MS; !closed; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
      if ((await status()).state === "ready" || refusedSettings) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, delay).unref();
      });
    }
  })();

  /** One upstream call: its answers, validated, or the error the client gets (uncharged). */
  const ask = async (call: DecisionsCall, calls: number, signal: AbortSignal): Promise<{ labelLogProbs: number[][]; inputTokens: number }> => {
    const reply = await transport.call("POST", path, call.body, { signal, timeoutMs: server.timeoutMs });
    const span = calls > 1 ? `questions ${call.expected[0].name}–${call.expected.at(-1)!.name}` : undefined;
    if (reply.status !== 200) throw upstreamRefusal(at, reply, scrub, span);
    let body: unknown;
    try {
      body = JSON.parse(reply.text);
    } catch {
      throw new EngineFailedError(`${at} answered 200 with a body that is not JSON: ${scrub(quote(reply.text, 120))}`, {
        clientMessage: `${UPSTREAM_UNUSABLE} (not JSON); nothing was charged`,
      });
    }
    try {
      return readDecisionsAnswers(body, call.expected);
    } catch (error) {
      if (!(error instanceof EngineFailedError)) throw error;
      throw new EngineFailedError(scrub(`${at}: ${error.message}`), { clientMessage: scrub(`${UPSTREAM_UNUSABLE}: ${error.message}; nothing was charged`) });
    }
  };

  return {
    modelId,
    description: { kind: "decisions", backend: where },
    ready,
    status,
    async prepare(prompt: JudgmentPrompt, signal?: AbortSignal): Promise<PreparedJudgment> {
      throwIfAborted(signal);
      return prepareDecisionsRequest(prompt, { model: upstreamModel, limits: options.upstreamLimits, maxRequestTokens: options.maxRequestTokens });
    },
    async evaluate(prepared: PreparedJudgment, signal?: AbortSignal): Promise<EngineResult> {
      if (!(prepared instanceof DecisionsPrepared)) throw new Error("evaluate() takes what this engine's prepare() returned");
      throwIfAborted(signal);
      const started = performance.now();
      // The calls go out together; the first failure ends the others (their answers would be of no use).
      const siblings = new AbortController();
      const onAbort = () => siblings.abort();
      signal?.addEventListener("abort", onAbort, { once: true });
      let answers;
      try {
        answers = await Promise.all(
          prepared.calls.map((call) =>
            ask(call, prepared.calls.length, siblings.signal).catch((error: unknown) => {
              siblings.abort();
              throw forClients(error);
            }),
          ),
        );
      } finally {
        signal?.removeEventListener("abort", onAbort);
      }
      const read = answers.reduce((sum, a) => sum + a.inputTokens, 0);
      return {
        labelLogProbs: answers.flatMap((a) => a.labelLogProbs),
        // Never above the hold: an upstream counting more than the bound is charged at the bound.
        inputTokens: Math.min(read, prepared.inputTokens),
        timingMs: performance.now() - started,
      };
    },
    async close() {
      closed = true;
      wake?.();
      transport.close();
    },
  };
}

/** The transport's own errors name the upstream's URL: clients get the plain words instead. */
function forClients(error: unknown): unknown {
  if (error instanceof EngineUnavailableError && error.clientMessage === undefined) return new EngineUnavailableError(error.message, UPSTREAM_UNAVAILABLE);
  if (error instanceof EngineFailedError && error.clientMessage === undefined) return new EngineFailedError(error.message, { clientMessage: UPSTREAM_FAILED });
  return error;
}
