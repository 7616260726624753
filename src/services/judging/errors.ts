/**
 * What judging refuses, as domain errors: each code names the catalogue entry (src/errors.ts)
 * the HTTP edge answers with. Insufficient funds is the billing service's own error.
 */
export type JudgingRefusalCode = "invalid_request" | "over_budget" | "over_upstream_limit" | "idempotency_key_in_use" | "idempotency_key_reused" | "model_timeout";

export class JudgingRefusal extends Error {
  override name = "JudgingRefusal";
  constructor(
    readonly code: JudgingRefusalCode,
    message: string,
  ) {
    super(message);
  }
}
