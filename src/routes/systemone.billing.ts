import type { Context, MiddlewareHandler } from "hono";
import { formatEuros, percentUsed } from "../billing/money.js";
import type { EngineResult, JudgmentEngine, PreparedJudgment } from "../engine/types.js";
import { RequestAbortedError } from "../engine/types.js";
import { ApiError } from "../errors.js";
import type { AppEnv } from "../http/context.js";
import { deadline } from "../http/deadline.js";
import type { BillingService, IdempotencyInput, Payer } from "../services/billing.js";
import { IdempotencyKeyLostError, InsufficientFundsError } from "../services/errors.js";
import type { LimitsService } from "../services/limits.js";
import type { BilledTo, Reservation, Standing, StoredResponse } from "../store/types.js";

/** The money side of POST /v1/systemone and POST /v1/decisions: rate limit, reservation, settlement, idempotency. */
export interface BillingDeps {
  limits: LimitsService;
  billing: BillingService;
  /** Longest a request may wait for and use the model before it fails with 502, uncharged. */
  requestTimeoutMs: number;
}

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
        `rate limit of ${decision.limit} requests per minute reached; retry in ${decision.resetSeconds} s`,
        { "retry-after": String(decision.resetSeconds) },
      );
    }
    await next();
  };
}

/** Printable ASCII without spaces, as Stripe and the IETF draft use; long enough for a UUID or a hash. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export function idempotencyKeyOf(c: Context<AppEnv>): string | undefined {
  const key = c.req.header("idempotency-key");
  if (key === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new ApiError("invalid_idempotency_key", "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces");
  }
  return key;
}

/** The stored response for a retry, 409 while the first attempt runs, 400 for another body. */
export async function claimIdempotencyKey(billing: BillingService, claim: IdempotencyInput): Promise<StoredResponse | undefined> {
  const outcome = await billing.claimIdempotencyKey(claim);
  switch (outcome.kind) {
    case "claimed":
      return undefined;
    case "replay":
      return outcome.response;
    case "running":
      throw new ApiError("idempotency_key_in_use", "a request with this Idempotency-Key is still running; retry when it has finished");
    case "mismatch":
      throw new ApiError("idempotency_key_reused", "this Idempotency-Key was used with a different request body");
  }
}

/** Holds the charge, or refuses with 402 (and the standing that explains why); nothing is charged. */
export async function reserveOrRefuse(
  billing: BillingService,
  payer: Payer,
  input: { questions: number; inputTokens: number; requestId: string; idempotencyKey?: string },
): Promise<Reservation> {
  try {
    return await billing.reserve(payer, input);
  } catch (error) {
    if (error instanceof InsufficientFundsError) throw new ApiError("insufficient_funds", error.message, standingHeaders(error.standing));
    // A 502 like any request that outlived its time: the SDK's retry then gets the retry's answer.
    if (error instanceof IdempotencyKeyLostError) throw new ApiError("model_timeout", error.message);
    throw error;
  }
}

export function standingHeaders(standing: Standing): Record<string, string> {
  return {
    "x-plan-usage": `${percentUsed(standing.planUsed, standing.allowance)}%`,
    "x-balance-remaining": formatEuros(standing.balanceMicro),
  };
}

export function billingHeaders(settled: { billedTo: BilledTo; standing: Standing }): Record<string, string> {
  return { "x-billed-to": settled.billedTo, ...standingHeaders(settled.standing) };
}

/** The 502 of a model that outlived the request's time. */
export const modelTimeout = (timeoutMs: number) =>
  new ApiError("model_timeout", `the model did not answer within ${timeoutMs} ms; nothing was charged`);

/**
 * Runs the model for at most `timeoutMs`, and no longer than the client waits. Either way the
 * caller gets an error at once, even if the engine is stuck, so its reservation is released.
 */
export async function evaluateWithin(
  engine: JudgmentEngine,
  prepared: PreparedJudgment,
  clientSignal: AbortSignal,
  timeoutMs: number,
): Promise<EngineResult> {
  const step = deadline(clientSignal, timeoutMs);
  const { signal } = step;
  const explain = () =>
    step.timedOut
      ? modelTimeout(timeoutMs)
      : new RequestAbortedError("the client closed the request before it was answered");
  if (signal.aborted) {
    step.dispose();
    throw explain();
  }
  const evaluation = engine.evaluate(prepared, signal);
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(explain());
    signal.addEventListener("abort", onAbort, { once: true });
  });
  // Whichever loses the race must not become an unhandled rejection.
  evaluation.catch(() => undefined);
  aborted.catch(() => undefined);
  try {
    return await Promise.race([evaluation, aborted]);
  } catch (error) {
    throw error instanceof RequestAbortedError && step.timedOut ? explain() : error;
  } finally {
    step.dispose();
    signal.removeEventListener("abort", onAbort);
  }
}
