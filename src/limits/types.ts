/**
 * Rate limiting as a mechanism: the caller passes the policy (what to count, how many, over
 * what window); implementations only count. Fixed windows: each `key` gets `limit` hits per
 * window of `windowMs`, windows starting at multiples of `windowMs` shifted by `offsetMs`.
 */
export interface RateLimitInput {
  key: string;
  limit: number;
  windowMs: number;
  /** Shifts the key's windows, so limited clients do not all come back at the same instant. */
  offsetMs: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Hits left in the current window after this one. */
  remaining: number;
  /** Milliseconds until the current window ends (at least 1). */
  resetMs: number;
}

export interface RateLimiter {
  /** Where the windows live: the store's database, or Redis. */
  readonly kind: "database" | "redis";
  /** Counts one hit; a hit over the limit is refused and not counted. */
  hit(input: RateLimitInput): Promise<RateLimitDecision>;
  /** Resolves when the limiter can decide now; rejects with LimiterUnavailableError. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The limiter's backend cannot be reached. Never answered by counting locally instead: a limit
 * per instance would let limit × instances through.
 */
export class LimiterUnavailableError extends Error {
  override name = "LimiterUnavailableError";
}

/** Start of the window holding `at`. */
export function windowStart(at: number, windowMs: number, offsetMs: number): number {
  const offset = ((offsetMs % windowMs) + windowMs) % windowMs;
  return Math.floor((at - offset) / windowMs) * windowMs + offset;
}
