import {
  BudgetError,
  EngineFailedError,
  EngineUnavailableError,
  RequestAbortedError,
  UnsupportedTextError,
  UpstreamLimitError,
  UpstreamRejectedError,
} from "../../engine/types.js";

/**
 * What judging refuses, as domain errors: each code names the catalogue entry (src/errors.ts)
 * the HTTP edge answers with. Insufficient funds is the billing service's own error.
 */
export type JudgingRefusalCode =
  | "invalid_request"
  | "over_budget"
  | "over_upstream_limit"
  | "upstream_rejected"
  | "idempotency_key_in_use"
  | "idempotency_key_reused"
  | "model_unavailable"
  | "model_failed"
  | "model_timeout"
  | "client_closed_request";

export class JudgingRefusal extends Error {
  override name = "JudgingRefusal";
  /** What API clients are told instead of `message` when that is for the operator's log (an engine's settings, its upstream's words). */
  readonly clientMessage?: string;
  constructor(
    readonly code: JudgingRefusalCode,
    message: string,
    options?: ErrorOptions & { clientMessage?: string },
  ) {
    super(message, options);
    this.clientMessage = options?.clientMessage;
  }
}

/**
 * The one place an engine's error becomes a catalogue code; judge() applies it to whatever its
 * flow throws. Errors of other services (billing, the store, the limiter) pass unchanged.
 */
export function judgingRefusalOf(error: unknown): unknown {
  const as = (code: JudgingRefusalCode, clientMessage?: string) => new JudgingRefusal(code, (error as Error).message, { cause: error, clientMessage });
  if (error instanceof BudgetError) return as("over_budget");
  if (error instanceof UpstreamLimitError) return as("over_upstream_limit");
  if (error instanceof EngineUnavailableError) return as("model_unavailable", error.clientMessage);
  if (error instanceof EngineFailedError) return as("model_failed", error.clientMessage);
  if (error instanceof UpstreamRejectedError) return as("upstream_rejected");
  if (error instanceof UnsupportedTextError) return as("invalid_request");
  if (error instanceof RequestAbortedError) return as("client_closed_request");
  return error;
}
