import type { RateLimiter } from "../limits/types.js";
import type { Payer } from "./billing.js";

/** The plan's limit is per minute, per account. */
const MINUTE_MS = 60_000;

export interface PerMinuteDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets (at least 1), for x-ratelimit-reset and Retry-After. */
  resetSeconds: number;
}

export interface LimitsService {
  /** Counts one attempt against the account's requests per minute. */
  perMinute(payer: Payer): Promise<PerMinuteDecision>;
}

export function createLimitsService(limiter: RateLimiter): LimitsService {
  return {
    async perMinute({ accountId, terms }) {
      const decision = await limiter.hit({
        key: `rpm:${accountId}`,
        limit: terms.requestsPerMinute,
        windowMs: MINUTE_MS,
        // Each account's windows are offset by its creation time, so limited clients do not
        // all come back at the same second.
        offsetMs: terms.createdAt % MINUTE_MS,
      });
      const { allowed, limit, remaining } = decision;
      return { allowed, limit, remaining, resetSeconds: Math.max(1, Math.ceil(decision.resetMs / 1000)) };
    },
  };
}
