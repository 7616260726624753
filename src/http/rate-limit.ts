import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors.js";
import type { LimitsService } from "../services/limits.js";
import type { AppEnv } from "./context.js";

/** Counts every authenticated attempt, before the body is read; 429 with Retry-After past the limit. */
export function rateLimit(limits: LimitsService): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const decision = await limits.perMinute(c.get("caller"));
    c.header("x-ratelimit-limit", String(decision.limit));
    c.header("x-ratelimit-remaining", String(decision.remaining));
    c.header("x-ratelimit-reset", String(decision.resetSeconds));
    if (!decision.allowed) {
      throw new ApiError(
        "rate_limited",
        `${decision.scope === "key" ? "this key's own" : "the plan's"} rate limit of ${decision.limit} requests per minute reached; retry in ${decision.resetSeconds} s`,
        { "retry-after": String(decision.resetSeconds) },
      );
    }
    await next();
  };
}
