import http from "node:http";
import type { AddressInfo } from "node:net";
import { KEY_PROBE_BODY } from "../../engine/gateways/systemone/engine.js";

/**
 * A stand-in for a server that speaks `POST /v1/systemone`, for the gateway's fault tests and
 * bench: it answers as its handler says (a real answer from a real instance of this service,
 * broken in one way; a status; silence) and records every request it receives. `/health` and
 * `/v1/models` answer like a healthy upstream unless the handler takes them.
 */

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body text ("" for a GET). */
  body: string;
}

export interface StandInReply {
  status?: number;
  /** Sent as is when a string (so malformed JSON can be sent), JSON-encoded otherwise. */
  body?: unknown;
  /** Answers only after this long (a slow upstream). */
  delayMs?: number;
}

export type StandInHandler = (request: ReceivedRequest) => StandInReply | undefined | Promise<StandInReply | undefined>;

export interface SystemOneStandIn {
  url: string;
  /** Every request received, oldest first. */
  readonly requests: ReceivedRequest[];
  /** Requests to POST /v1/systemone only. */
  judgments(): ReceivedRequest[];
  close(): Promise<void>;
}

export const STAND_IN_MODEL = "stand-in-model";

/** `handler` returning undefined falls back to the healthy defaults (and a 404 for POST /v1/systemone). */
export async function startSystemOneStandIn(
  handler: StandInHandler,
  options: { prefix?: string /** false: keep no requests (a long bench) */; record?: boolean } = {},
): Promise<SystemOneStandIn> {
  const requests: ReceivedRequest[] = [];
  const prefix = options.prefix ?? "";
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? "").startsWith(prefix) ? (req.url ?? "").slice(prefix.length) : `(outside ${prefix})${req.url}`;
    const received = { method: req.method ?? "", path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
    if (options.record !== false) requests.push(received);
    let reply: StandInReply;
    try {
      reply = (await handler(received)) ?? defaultReply(received);
    } catch (error) {
      reply = { status: 599, body: { error: `stand-in handler failed: ${String(error)}` } };
    }
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (res.destroyed) return;
    const text = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body ?? {});
    res.writeHead(reply.status ?? 200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${prefix}`,
    requests,
    // The gateway's key probe (a body with no questions) is no judgment.
    judgments: () => requests.filter((r) => r.method === "POST" && r.path === "/v1/systemone" && r.body !== KEY_PROBE_BODY),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function defaultReply(request: ReceivedRequest): StandInReply {
  if (request.method === "GET" && request.path === "/health") return { body: { status: "ok", model: STAND_IN_MODEL, upstream: "ok" } };
  if (request.method === "GET" && request.path === "/v1/models") {
    return { body: { models: [{ name: STAND_IN_MODEL, description: "stand-in", release_date: "2026-01-01" }] } };
  }
  return { status: 404, body: { error: `the stand-in has no ${request.method} ${request.path}` } };
}

/**
 * The real answer to a forwarded request, from a real instance of this service (the tiny
 * model): the numbers a broken stand-in starts from are real ones.
 */
export async function realAnswer(upstream: { url: string; key: string }, request: ReceivedRequest): Promise<{ status: number; body: any }> {
  const response = await fetch(`${upstream.url}/v1/systemone`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${upstream.key}` },
    body: request.body,
  });
  return { status: response.status, body: await response.json() };
}

/** POST /v1/systemone answered with the real answer passed through `mutate` (which may change it in place). */
export function mutatingHandler(upstream: { url: string; key: string }, mutate: (body: any) => unknown): StandInHandler {
  return async (request) => {
    if (request.path !== "/v1/systemone") return undefined;
    const real = await realAnswer(upstream, request);
    if (real.status !== 200) return { status: 599, body: { error: `the real upstream answered ${real.status}`, real: real.body } };
    const changed = mutate(real.body);
    return { body: changed === undefined ? real.body : changed };
  };
}

/**
 * A valid answer to a forwarded request, with fixed numbers (the bench's instant upstream):
 * choice probabilities halving from the first option, noul 0.73, score levels likewise, each
 * with consistent logits, and `inputTokens` as its usage.
 */
export function fixedAnswerFor(requestBody: string, inputTokens: number): string {
  const request = JSON.parse(requestBody) as { questions: Record<string, { type: string; criteria?: unknown }> };
  const answers: Record<string, unknown> = {};
  for (const [id, question] of Object.entries(request.questions)) {
    if (question.type === "noul") {
      answers[id] = { type: "noul", noul: 0.73, logits: { true: Math.log(0.73), false: Math.log(0.27) } };
      continue;
    }
    const keys = question.type === "choice" ? Object.keys(question.criteria as object) : (question.criteria as unknown[]).map((_, i) => String(i));
    const weights = keys.map((_, i) => 2 ** -i);
    const total = weights.reduce((a, b) => a + b, 0);
    const p = weights.map((w) => w / total);
    const probabilities = Object.fromEntries(keys.map((k, i) => [k, p[i]]));
    const logits = Object.fromEntries(keys.map((k, i) => [k, Math.log(p[i])]));
    answers[id] =
      question.type === "choice"
        ? { type: "choice", choice: keys[0], probabilities, logits, confidence: 0 }
        : { type: "score", score: p.reduce((sum, pi, i) => sum + i * pi, 0), probabilities, logits, legend: {}, confidence: 0 };
  }
  return JSON.stringify({ model: STAND_IN_MODEL, answers, usage: { input_tokens: inputTokens, output_tokens: 0 }, timing_ms: 0.1 });
}
