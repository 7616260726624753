import type { Context, MiddlewareHandler } from "hono";
import type { ApiError, ErrorCode } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../services/metrics.js";
import type { ServerError } from "../services/types.js";
import type { AppEnv } from "./context.js";
import { messageOf } from "../error-message.js";

/**
 * One line per request (method, path, status, timing, the error code if any) and its metrics;
 * never headers or bodies, which carry keys and user data. `route` is the matched pattern, so
 * scanners' paths do not each become a time series.
 */
export function accessLog(log: Logger, metrics: Metrics, errors: WeakMap<Context, ApiError>, serverErrors?: ServerErrorRecorder): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const seconds = (performance.now() - started) / 1000;
    const status = c.res.status;
    const code: ErrorCode | undefined = errors.get(c)?.code;
    metrics.httpRequest({ method: c.req.method, route: c.req.routePath === "/*" ? "unmatched" : c.req.routePath, status, seconds });
    recordOutcome(metrics, c, code);
    const route = c.req.routePath === "/*" ? "unmatched" : c.req.routePath;
    // Not a database_unavailable: the write would fail too, and on a silent partition each such write
    // holds a pool connection until its timeout, so the next requests would queue behind them.
    if (status >= 500 && serverErrors && !PROBES.test(route) && code !== "database_unavailable") {
      const error = { method: c.req.method, route, status, code: code ?? null, requestId: c.get("requestId") ?? null };
      // Best effort, after the response.
      void serverErrors
        .recordServerError(error)
        .catch((failure: unknown) => log.warn("server error not recorded", { request_id: error.requestId, detail: messageOf(failure) }));
    }
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

/** Where the console's "recent server errors" come from (the store's reports, across instances). */
export interface ServerErrorRecorder {
  recordServerError(error: Omit<ServerError, "id" | "at">): Promise<void>;
}

/** A /health 503 while the model loads, or a failed scrape, is a state the probes report, not an error of the service. */
const PROBES = /^\/(health|metrics)(\/|$)/;

/** Billing outcomes and rate-limit refusals: from the error decided, or from the judging outcome the route recorded. */
function recordOutcome(metrics: Metrics, c: Context<AppEnv>, code: ErrorCode | undefined): void {
  if (code === "rate_limited") metrics.rateLimited();
  else if (code === "insufficient_funds" || code === "key_budget_exhausted") metrics.billingOutcome(code, c.get("model"));
  else if (code === undefined) {
    const outcome = c.get("judging");
    // A replay was billed the first time; only a fresh answer carries a new charge.
    if (outcome && !outcome.replayed) metrics.billingOutcome(outcome.billedTo, c.get("model"));
  }
}
