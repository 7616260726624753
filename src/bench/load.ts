/**
 * The load loop: `concurrency` clients, each sending its next request as soon as the previous
 * one is answered (closed loop), for a number of requests or a duration.
 */
import type { BenchRequest } from "./requests.js";

export interface Outcome {
  /** HTTP status; 0 when no response came (refused, reset, timed out). Answered: 200 without `error`. */
  status: number;
  latencyMs: number;
  /** The server's usage.input_tokens; 0 unless answered. */
  inputTokens: number;
  model?: string;
  /** From a 429's Retry-After header. */
  retryAfterMs?: number;
  /** From x-ratelimit-limit and x-ratelimit-remaining, when the server sends both. */
  rateLimit?: { limit: number; remaining: number };
  /** For errors: the server's error code or the network error, to show what went wrong. */
  error?: string;
}

export type Send = (request: BenchRequest) => Promise<Outcome>;

export type Limit = { requests: number } | { durationMs: number };

export interface Progress {
  sent: number;
  answered: number;
  failed: number;
  elapsedMs: number;
}

export interface LoadOptions {
  send: Send;
  next: () => BenchRequest;
  concurrency: number;
  limit: Limit;
  onProgress?: (progress: Progress) => void;
  progressEveryMs?: number;
  /**
   * Open loop: requests start on a fixed schedule of this many per second (at most `concurrency`
   * in flight). A request that starts late because every client was busy counts its wait in its
   * latency, so a stalled server cannot hide its queue (no coordinated omission).
   */
  ratePerSecond?: number;
  /** Waits after a 429; injectable so tests need not wait for real. */
  sleep?: (ms: number) => Promise<void>;
}

export interface LoadResult {
  sent: number;
  answered: number;
  questions: number;
  inputTokens: number;
  /** Of answered requests only: an error's latency says nothing about answering. */
  latenciesMs: number[];
  /** Failed requests by status ("429", "502", …; "network" when no response came, "bad-200" for an unreadable 200). */
  errors: Record<string, number>;
  /** The first few distinct error descriptions. */
  errorSamples: string[];
  elapsedMs: number;
  /** CPU this process spent during the phase: the client's own cost when the server runs elsewhere. */
  clientCpuMs: number;
  model?: string;
  maxInFlight: number;
}

const MAX_ERROR_SAMPLES = 5;
const NETWORK_ERROR_PAUSE_MS = 100;

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const result: LoadResult = {
    sent: 0,
    answered: 0,
    questions: 0,
    inputTokens: 0,
    latenciesMs: [],
    errors: {},
    errorSamples: [],
    elapsedMs: 0,
    clientCpuMs: 0,
    maxInFlight: 0,
  };
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const deadline = "durationMs" in options.limit ? started + options.limit.durationMs : Infinity;
  const maxRequests = "requests" in options.limit ? options.limit.requests : Infinity;
  let inFlight = 0;
  const interval = options.ratePerSecond ? 1000 / options.ratePerSecond : 0;
  let scheduled = started;

  const client = async () => {
    while (result.sent < maxRequests && performance.now() < deadline) {
      const due = interval > 0 ? (scheduled += interval) : 0;
      if (due > performance.now()) await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
      if (performance.now() >= deadline) break;
      const late = interval > 0 ? Math.max(0, performance.now() - due) : 0;
      result.sent++;
      const request = options.next();
      result.maxInFlight = Math.max(result.maxInFlight, ++inFlight);
      const outcome = await options.send(request);
      inFlight--;
      record(result, request, { ...outcome, latencyMs: outcome.latencyMs + late });
      const pause = pauseAfter(outcome);
      // Never sleep past the end of a timed phase.
      if (pause > 0) await sleep(Math.min(pause, Math.max(0, deadline - performance.now())));
    }
  };

  // Silent once the deadline has passed: the phase's own summary follows.
  const report = () => performance.now() < deadline && options.onProgress?.(progressOf(result, started));
  const timer = options.onProgress ? setInterval(report, options.progressEveryMs ?? 5000) : undefined;
  timer?.unref();
  try {
    await Promise.all(Array.from({ length: options.concurrency }, client));
  } finally {
    if (timer) clearInterval(timer);
  }
  result.elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  result.clientCpuMs = (cpu.user + cpu.system) / 1000;
  return result;
}

/** Retry-After is honoured; a dead server is retried gently rather than in a busy loop. */
function pauseAfter(outcome: Outcome): number {
  if (outcome.retryAfterMs !== undefined) return outcome.retryAfterMs;
  return outcome.status === 0 ? NETWORK_ERROR_PAUSE_MS : 0;
}

function record(result: LoadResult, request: BenchRequest, outcome: Outcome): void {
  if (outcome.status === 200 && outcome.error === undefined) {
    result.answered++;
    result.questions += request.questions;
    result.inputTokens += outcome.inputTokens;
    result.latenciesMs.push(outcome.latencyMs);
    result.model ??= outcome.model;
    return;
  }
  const key = outcome.status === 0 ? "network" : outcome.status === 200 ? "bad-200" : String(outcome.status);
  result.errors[key] = (result.errors[key] ?? 0) + 1;
  const sample = `${key}: ${outcome.error ?? "no detail"}`;
  if (result.errorSamples.length < MAX_ERROR_SAMPLES && !result.errorSamples.includes(sample)) {
    result.errorSamples.push(sample);
  }
}

function progressOf(result: LoadResult, started: number): Progress {
  return {
    sent: result.sent,
    answered: result.answered,
    failed: Object.values(result.errors).reduce((total, n) => total + n, 0),
    elapsedMs: performance.now() - started,
  };
}
