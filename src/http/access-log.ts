import type { Context, MiddlewareHandler } from "hono";
import type { ApiError, ErrorCode } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../services/metrics.js";
import type { AppEnv } from "./context.js";

/**
 * One line per request (method, path, status, timing, the error code if any) and its metrics;
 * never headers or bodies, which carry keys and user data. `route` is the matched pattern, so
 * scanners' paths do not each become a time series.
 */
export function accessLog(log: Logger, metrics: Metrics, errors: WeakMap<Context, ApiError>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const seconds = (performance.now() - started) / 1000;
    const status = c.res.status;
    const code: ErrorCode | undefined = errors.get(c)?.code;
    metrics.httpRequest({ method: c.req.method, route: c.req.routePath === "/*" ? "unmatched" : c.req.routePath, status, seconds });
    recordOutcome(metrics, c, code);
    log.info("request", {
      request_id: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      status,
      ms: Math.round(seconds * 1000),
      account: c.get("caller")?.accountId,
      ...(c.get("model") !== undefined && { model: c.get("model") }),
      code,
    });
  };
}

/** Billing outcomes and rate-limit refusals, read from what the response says. */
function recordOutcome(metrics: Metrics, c: Context<AppEnv>, code: ErrorCode | undefined): void {
  if (code === "rate_limited") metrics.rateLimited();
  else if (code === "insufficient_funds") metrics.billingOutcome("insufficient_funds", c.get("model"));
  else if (c.res.status === 200 && c.res.headers.get("idempotent-replayed") !== "true") {
    // A replay was billed the first time; only a fresh answer carries a new charge.
    const billedTo = c.res.headers.get("x-billed-to");
    if (billedTo === "plan" || billedTo === "balance") metrics.billingOutcome(billedTo, c.get("model"));
  }
}
