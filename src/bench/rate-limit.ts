/**
 * Before the phases: does the key's plan let the load through? A bench against a limit below
 * its load mostly measures the limit (429s and Retry-After waits: three 5 s phases took two
 * minutes), so it says so from the first answer's x-ratelimit-* headers, and stops unless told.
 */
import type { Limit } from "./load.js";

export interface PlannedRun {
  /** Requests outside the phases: the first probe and the calibration or ceiling probes. */
  probes: number;
  phases: { concurrency: number; warmup: number }[];
  limit: Limit;
}

export interface RateLimitCheck {
  /** The plan's requests per minute (x-ratelimit-limit). */
  limit: number;
  /** Left in the current minute when the first request was answered (x-ratelimit-remaining). */
  remaining: number;
  /** A low estimate of the requests the run sends in its busiest minute. */
  offeredPerMinute: number;
  /** The limit is below that estimate: 429s are certain. */
  below: boolean;
}

const MINUTE_MS = 60_000;

/**
 * Low on purpose, so a run that would fit is never refused: the pace is one request per
 * `latencyMs` (the first request's), as if the server answered one at a time and extra clients
 * added nothing, and a timed phase sends at least one request per client.
 */
export function offeredPerMinute(run: PlannedRun, latencyMs: number): number {
  const perRequestMs = Math.max(1, latencyMs);
  const phaseRequests = (concurrency: number) => ("requests" in run.limit ? run.limit.requests : Math.max(concurrency, run.limit.durationMs / perRequestMs));
  const total = run.probes + run.phases.reduce((sum, phase) => sum + phase.warmup + phaseRequests(phase.concurrency), 0);
  return Math.floor(Math.min(total, MINUTE_MS / perRequestMs));
}

export function checkRateLimit(rateLimit: { limit: number; remaining: number }, run: PlannedRun, latencyMs: number): RateLimitCheck {
  const offered = offeredPerMinute(run, latencyMs);
  // The first request is sent and counted; what is left of this minute (other clients of the
  // same account use it too) must hold the rest of the run's first minute.
  const short = rateLimit.remaining < offered - 1;
  return { ...rateLimit, offeredPerMinute: offered, below: rateLimit.limit < offered || short };
}

/** One line: what the limit does to the figures, and the way out. */
export function describeRateLimit(check: RateLimitCheck, allowed: boolean): string {
  const left = check.limit < check.offeredPerMinute ? "" : ` (only ${check.remaining} left in this minute: other clients of the account use it too)`;
  const problem =
    `this key's plan allows ${check.limit} requests per minute${left} and this run would send at least ${check.offeredPerMinute} ` +
    `in a minute: the figures would mostly measure the rate limit (429s and Retry-After waits)`;
  if (allowed) return `WARNING: ${problem}; going on as --allow-rate-limit asks, 429s are counted in the 429 column`;
  return (
    `${problem}. Bench with a key on a plan with a higher limit (e.g. judge plans create --name bench ` +
    `--rpm 1000000 --allowance 0 --price 0.05, then judge accounts set-plan <account id> bench), ` +
    `or pass --allow-rate-limit to measure anyway`
  );
}
