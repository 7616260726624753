/**
 * The benchmark's HTTP client: node:http with a keep-alive agent. Measured here, it costs about
 * a quarter of the CPU per request of the global fetch (undici), which matters when the client
 * shares a small machine with a server that answers in a millisecond.
 */
import http, { type IncomingHttpHeaders } from "node:http";
import https from "node:https";
import { endpointUrl, parseRetryAfter } from "../clients/judgment-endpoint.js";
import type { Outcome, Send } from "./load.js";

export interface BenchClient {
  send: Send;
  close(): void;
}

/** A request still unanswered after this long is an error, not a latency. */
const REQUEST_TIMEOUT_MS = 300_000;

export function createBenchClient(options: { url: string; key: string; maxSockets: number }): BenchClient {
  const endpoint = endpointUrl(options.url);
  const secure = endpoint.protocol === "https:";
  const agent = new (secure ? https : http).Agent({ keepAlive: true, maxSockets: options.maxSockets });
  const request = secure ? https.request : http.request;
  const authorization = `Bearer ${options.key}`;

  const send: Send = ({ body }) =>
    new Promise<Outcome>((resolve) => {
      const started = performance.now();
      const elapsed = () => performance.now() - started;
      const req = request(
        endpoint,
        {
          method: "POST",
          agent,
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            authorization,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", (error) => resolve({ status: 0, latencyMs: elapsed(), inputTokens: 0, error: error.message }));
          res.on("end", () => {
            const latencyMs = elapsed();
            const text = Buffer.concat(chunks).toString("utf8");
            const outcome = readResponse(res.statusCode ?? 0, text, latencyMs, res.headers["retry-after"]);
            const rateLimit = readRateLimit(res.headers);
            resolve(rateLimit ? { ...outcome, rateLimit } : outcome);
          });
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
      req.on("error", (error) => resolve({ status: 0, latencyMs: elapsed(), inputTokens: 0, error: error.message }));
      req.end(body);
    });

  return { send, close: () => agent.destroy() };
}

export function readResponse(status: number, text: string, latencyMs: number, retryAfter?: string): Outcome {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (status === 200) {
    const usage = (body as { usage?: { input_tokens?: unknown } } | undefined)?.usage;
    const inputTokens = usage?.input_tokens;
    if (typeof inputTokens !== "number" || !Number.isFinite(inputTokens)) {
      return { status, latencyMs, inputTokens: 0, error: "a 200 without usage.input_tokens" };
    }
    const model = (body as { model?: unknown }).model;
    return { status, latencyMs, inputTokens, model: typeof model === "string" ? model : undefined };
  }
  const { code, error } = (body ?? {}) as { code?: unknown; error?: unknown };
  const detail = typeof code === "string" ? code : typeof error === "string" ? error : text;
  return {
    status,
    latencyMs,
    inputTokens: 0,
    error: detail.slice(0, 200),
    retryAfterMs: status === 429 ? waitAfter429(retryAfter, Date.now()) : undefined,
  };
}

/** A 429 without a usable Retry-After waits a second. */
export function waitAfter429(retryAfter: string | undefined, nowMs: number): number {
  return parseRetryAfter(retryAfter, nowMs) ?? 1000;
}

/** The plan's requests per minute and what is left of them, when the server says (ours does on every authenticated answer). */
export function readRateLimit(headers: IncomingHttpHeaders): { limit: number; remaining: number } | undefined {
  const number = (name: string) => {
    const value = headers[name];
    return typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : undefined;
  };
  const limit = number("x-ratelimit-limit");
  const remaining = number("x-ratelimit-remaining");
  return limit === undefined || remaining === undefined ? undefined : { limit, remaining };
}
