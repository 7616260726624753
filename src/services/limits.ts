import type { RateLimiter } from "../limits/types.js";
import type { Payer } from "./billing.js";

/** The plan's limit is per minute, per account. */
const MINUTE_MS = 60_000;

export interface PerMinuteDecision {
  allowed: boolean;
  /** Which limit the headers describe: the one refused, else the one with fewer requests left. */
  scope: "plan" | "key";
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets (at least 1), for x-ratelimit-reset and Retry-After. */
  resetSeconds: number;
}

export interface LimitsService {
  /** Counts one attempt against the account's requests per minute, then against the key's own limit if it has one. */
  perMinute(payer: Payer & { keyRequestsPerMinute?: number | null }): Promise<PerMinuteDecision>;
}

export function createLimitsService(limiter: RateLimiter): LimitsService {
  return {
    async perMinute({ accountId, terms, keyId, keyRequestsPerMinute }) {
      // Each account's windows are offset by its creation time, so limited clients do not
      // all come back at the same second; its keys' windows share the offset.
      const offsetMs = terms.createdAt % MINUTE_MS;
      const plan = decided("plan", await limiter.hit({ key: `rpm:${accountId}`, limit: terms.requestsPerMinute, windowMs: MINUTE_MS, offsetMs }));
      if (!plan.allowed || keyId === undefined || keyRequestsPerMinute == null) return plan;
      // Only attempts the plan let through count against the key: one refusal, one count.
      const key = decided("key", await limiter.hit({ key: `rpm-key:${keyId}`, limit: keyRequestsPerMinute, windowMs: MINUTE_MS, offsetMs }));
      return !key.allowed || key.remaining < plan.remaining ? key : plan;
    },
  };
}

function decided(scope: "plan" | "key", decision: { allowed: boolean; limit: number; remaining: number; resetMs: number }): PerMinuteDecision {
  const { allowed, limit, remaining } = decision;
  return { allowed, scope, limit, remaining, resetSeconds: Math.max(1, Math.ceil(decision.resetMs / 1000)) };
}
