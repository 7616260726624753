import type { Standing } from "../store/types.js";

/**
 * What the services refuse, as domain errors; the HTTP edge (and the CLI) turn them into
 * statuses and messages of their own.
 */

/** Neither the plan's allowance nor the balance can pay; nothing was charged. */
export class InsufficientFundsError extends Error {
  override name = "InsufficientFundsError";
  constructor(
    message: string,
    readonly standing: Standing,
  ) {
    super(message);
  }
}

/** The caller's account disappeared between authentication and billing: treated as a bad key. */
export class UnknownAccountError extends Error {
  override name = "UnknownAccountError";
}

/** A request outlived its Idempotency-Key claim and a retry took the key: it must not be charged too. */
export class IdempotencyKeyLostError extends Error {
  override name = "IdempotencyKeyLostError";
}

/** The balance could pay, but not within the key's own budget; nothing was charged. */
export class KeyBudgetExhaustedError extends Error {
  override name = "KeyBudgetExhaustedError";
  constructor(
    message: string,
    readonly standing: Standing,
  ) {
    super(message);
  }
}
