import { bodyMessage } from "../systemone/engine.js";
import type { UpstreamReply } from "../systemone/transport.js";
import { EngineFailedError, EngineUnavailableError, UpstreamRejectedError, type EngineStatus } from "../../types.js";

/**
 * What a Decisions upstream's statuses mean here. Its 4xx about the request is the client's to
 * fix (400 upstream_rejected, its message quoted); everything else is ours (502, uncharged):
 * our key, our account there, our URL or model name, its rate limit, its failure. A 502 tells
 * API clients only that it is not their fault: the upstream's URL, its words and our settings
 * are for the operator's log and /health (`message`), never for the client (`clientMessage`).
 */

export const UPSTREAM_UNAVAILABLE = "the model's server is unavailable; nothing was charged";
export const UPSTREAM_FAILED = "the model's server failed; nothing was charged";
export const UPSTREAM_UNUSABLE = "the model's server answered something unusable";

/** `at` is the endpoint without credentials (`https://api.example/v1/decisions`); `scrub` removes our key. */
export function upstreamRefusal(at: string, reply: UpstreamReply, scrub: (text: string) => string, calls?: string): Error {
  const said = scrub(bodyMessage(reply.text));
  const answered = `${at} answered ${reply.status}`;
  if (refusesOurModel(reply)) {
    return new EngineUnavailableError(`${answered}: it does not serve the model this gateway names (check JUDGE_ENGINE_MODEL): ${said}`, UPSTREAM_UNAVAILABLE);
  }
  switch (reply.status) {
    case 400:
    case 413:
    case 422:
      // The upstream knows the questions by the names we gave them, which the client never chose.
      return new UpstreamRejectedError(
        `the upstream server refused the request: ${said} (it numbers the questions q1, q2, … in request order${calls ? `; this was its call for ${calls}` : ""})`,
      );
    case 401:
    case 403:
      return new EngineUnavailableError(keyRefusal(at, reply, scrub), UPSTREAM_UNAVAILABLE);
    case 402:
      return new EngineUnavailableError(`${answered}: this gateway's upstream account cannot pay: ${said}`, UPSTREAM_UNAVAILABLE);
    case 404:
      return new EngineUnavailableError(
        `${answered}: no Decisions endpoint or model there (check JUDGE_ENGINE_URL and JUDGE_ENGINE_MODEL): ${said}`,
        UPSTREAM_UNAVAILABLE,
      );
    case 408:
    case 429:
    case 502:
    case 503:
    case 504:
      return new EngineUnavailableError(`${answered}: ${said}`, UPSTREAM_UNAVAILABLE);
    default:
      return new EngineFailedError(`${answered}: ${said}`, { clientMessage: UPSTREAM_FAILED });
  }
}

/** For the operator (/health, the log): which upstream refused the key, and which setting holds it. */
export function keyRefusal(at: string, reply: UpstreamReply, scrub: (text: string) => string): string {
  return `${at} answered ${reply.status}: it refused this gateway's key (check JUDGE_ENGINE_KEY): ${scrub(bodyMessage(reply.text))}`;
}

/**
 * /health's reading of the key probe (a body with no input and no questions, refused as invalid
 * by every Decisions server after it has checked the key, and billed by none): its 400/422 is
 * the healthy answer; a refused key, a wrong URL or model, a server that is down or loading is not.
 */
export function probeStatus(at: string, reply: UpstreamReply, scrub: (text: string) => string): EngineStatus {
  const said = scrub(bodyMessage(reply.text));
  if (refusesOurModel(reply) || reply.status === 401 || reply.status === 402 || reply.status === 403 || reply.status === 404) {
    return { state: "failed", detail: (upstreamRefusal(at, reply, scrub) as Error).message };
  }
  if (reply.status === 503 && /loading/i.test(reply.text)) return { state: "loading", detail: `${at} is loading: ${said}` };
  if (reply.status >= 500 || reply.status === 408) return { state: "failed", detail: `${at} answered ${reply.status}: ${said}` };
  return { state: "ready" };
}

/** An error about the `model` field (OpenAI's `model_not_found`, this service's `unknown_model`): our setting, not the client's request. */
function refusesOurModel(reply: UpstreamReply): boolean {
  if (reply.status !== 400 && reply.status !== 404 && reply.status !== 422) return false;
  const error = (parsed(reply.text) as { error?: { code?: unknown; param?: unknown } } | undefined)?.error;
  return typeof error === "object" && error !== null && (error.param === "model" || error.code === "model_not_found" || error.code === "unknown_model");
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
