import { endpointUrl, parseRetryAfter } from "../clients/judgment-endpoint.js";
import type { DebiasMode } from "../judgment/debias.js";
import { plural } from "../judgment/plural.js";
import { mapConcurrent } from "./progress.js";

/**
 * A small client for any server that speaks POST /v1/systemone (ours or another). It retries
 * what is worth retrying: 429 after the server's Retry-After, 408/5xx and network failures with
 * exponential backoff. Any other 4xx is the dataset's or the caller's mistake and fails at once.
 */

/** The fields eval and calibrate add to every request they send: `model`, `x_debias` and (eval's `--task`) `x_task` when asked for. */
export function requestExtras(options: { model?: string; debias?: DebiasMode; task?: string }): { model?: string; x_debias?: DebiasMode; x_task?: string } {
  return {
    ...(options.model !== undefined && { model: options.model }),
    ...(options.debias && { x_debias: options.debias }),
    ...(options.task !== undefined && { x_task: options.task }),
  };
}

export interface JudgmentReply {
  model: string;
  answers: Record<string, unknown>;
  usage: { input_tokens: number };
}

export interface RetryEvent {
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface ClientOptions {
  /** Base address, e.g. http://127.0.0.1:8080 (the path /v1/systemone is added). */
  url: string;
  key: string;
  timeoutMs?: number;
  retries?: number;
  /** First backoff delay; doubled on each retry, with jitter, up to maxDelayMs. */
  backoffMs?: number;
  maxDelayMs?: number;
  onRetry?: (event: RetryEvent) => void;
  /** Replaceable so tests need not wait. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export class JudgmentRequestError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
    this.name = "JudgmentRequestError";
  }
}

export interface JudgmentClient {
  judge(body: unknown): Promise<JudgmentReply>;
}

/** A server asking for a longer pause than this is treated as refusing. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

export function createJudgmentClient(options: ClientOptions): JudgmentClient {
  const endpoint = endpointOf(options.url);
  const retries = options.retries ?? 5;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const backoff = (attempt: number) => {
    const full = Math.min(options.maxDelayMs ?? 30_000, (options.backoffMs ?? 500) * 2 ** attempt);
    // Half fixed, half random: workers that failed together do not all come back together.
    return full / 2 + (random() * full) / 2;
  };

  async function judge(body: unknown): Promise<JudgmentReply> {
    for (let attempt = 0; ; attempt++) {
      const outcome = await attemptOnce(endpoint, options, body);
      if (outcome.ok) return outcome.reply;
      if (!outcome.retry || attempt >= retries) {
        if (!outcome.retry) throw outcome.error;
        const { message, status, code } = outcome.error;
        throw new JudgmentRequestError(`${message} (gave up after ${plural(attempt + 1, "attempt")})`, status, code);
      }
      const delayMs = outcome.retryAfterMs ?? backoff(attempt);
      options.onRetry?.({ attempt: attempt + 1, delayMs, reason: outcome.error.message });
      await sleep(delayMs);
    }
  }
  return { judge };
}

/** A wrong address is the caller's mistake, reported like any other refused request. */
function endpointOf(url: string): string {
  try {
    return endpointUrl(url).href;
  } catch (error) {
    throw new JudgmentRequestError(`invalid server address: ${(error as Error).message}`);
  }
}

type Outcome = { ok: true; reply: JudgmentReply } | { ok: false; retry: boolean; retryAfterMs?: number; error: JudgmentRequestError };

async function attemptOnce(endpoint: string, options: ClientOptions, body: unknown): Promise<Outcome> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(endpoint, {
      method: "POST",
      headers: { authorization: `Bearer ${options.key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
    });
    text = await response.text();
  } catch (error) {
    const cause = error as Error & { cause?: { code?: string } };
    const why = cause.name === "TimeoutError" ? `no answer within ${options.timeoutMs ?? 60_000} ms` : (cause.cause?.code ?? cause.message);
    return { ok: false, retry: true, error: new JudgmentRequestError(`${endpoint}: ${why}`) };
  }
  if (response.ok) return parseReply(endpoint, text);
  const error = httpError(endpoint, response.status, text);
  if (response.status === 429) {
    const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
    if (retryAfterMs !== undefined && retryAfterMs > MAX_RETRY_AFTER_MS) return { ok: false, retry: false, error };
    return { ok: false, retry: true, retryAfterMs, error };
  }
  return { ok: false, retry: response.status === 408 || response.status >= 500, error };
}

function httpError(endpoint: string, status: number, text: string): JudgmentRequestError {
  let message = text.slice(0, 300);
  let code: string | undefined;
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    // The ecosystem's servers put the message in error, detail or message.
    const found = [body.error, body.detail, body.message].find((m) => typeof m === "string");
    if (typeof found === "string") message = found;
    if (typeof body.code === "string") code = body.code;
  } catch {
    // Not JSON: the start of the text is the best message there is.
  }
  return new JudgmentRequestError(`${endpoint} answered ${status}${code ? ` ${code}` : ""}: ${message}`, status, code);
}

function parseReply(endpoint: string, text: string): Outcome {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, retry: false, error: new JudgmentRequestError(`${endpoint} answered 200 with a body that is not JSON: ${text.slice(0, 200)}`) };
  }
  const b = body as Partial<JudgmentReply> | null;
  if (!b || typeof b.model !== "string" || typeof b.answers !== "object" || b.answers === null) {
    return { ok: false, retry: false, error: new JudgmentRequestError(`${endpoint} answered 200 without model and answers: ${text.slice(0, 200)}`) };
  }
  const inputTokens = typeof b.usage?.input_tokens === "number" ? b.usage.input_tokens : 0;
  return { ok: true, reply: { model: b.model, answers: b.answers, usage: { input_tokens: inputTokens } } };
}

/** A request with what to call it in an error message ("item t3 (line 3)"). */
export interface LabelledRequest {
  body: unknown;
  label: string;
}

export class EvaluationRunError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EvaluationRunError";
  }
}

/** Runs `read`, prefixing any error with `label`, so a bad answer names its item. */
export function labelErrors<T>(label: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new EvaluationRunError(`${label}: ${(error as Error).message}`);
  }
}

/**
 * Sends every request, `concurrency` at a time, advancing `progress` per reply. The first failure
 * stops the run, named by its request's label: one bad item should not be buried in thousands.
 */
export async function sendAll(
  client: JudgmentClient,
  requests: readonly LabelledRequest[],
  options: { concurrency: number; progress: { advance(): void } },
): Promise<JudgmentReply[]> {
  return mapConcurrent(requests, options.concurrency, async (request) => {
    try {
      const reply = await client.judge(request.body);
      options.progress.advance();
      return reply;
    } catch (error) {
      throw new EvaluationRunError(`${request.label}: ${(error as Error).message}`);
    }
  });
}
