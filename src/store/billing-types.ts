/** What the billing repository takes and returns (reserve, settle, release); re-exported by types.ts. */

export type BilledTo = "plan" | "balance";

/** What headers report after a request: the period's usage and the balance. */
export interface Standing {
  /** Questions of the current period answered or held by requests in flight. */
  planUsed: number;
  allowance: number;
  balanceMicro: number;
  /** The part of the balance held by requests in flight. */
  heldMicro: number;
}

export interface Reservation {
  id: string;
  accountId: string;
  billedTo: BilledTo;
  questions: number;
  inputTokens: number;
  amountMicro: number;
  periodStart: number;
  requestId: string;
  expiresAt: number;
  /**
   * The API key the request came with, written on its ledger entry. Its budget is held only for a
   * balance hold (the reservations row's key_id); a hold read back from the database names only that key.
   */
  keyId: string | null;
  /** The model that answers, recorded on the ledger entry. */
  model?: string;
}

/**
 * A hold to take. The caller computes the amounts (billing policy lives in services/billing):
 * the store only applies them, each debit one conditional statement.
 */
export interface HoldRequest {
  accountId: string;
  /** The allowance period the questions count against. */
  periodStart: number;
  questions: number;
  inputTokens: number;
  /** What the balance pays if the allowance cannot: the caller's price for these tokens. */
  amountMicro: number;
  requestId: string;
  /** The key the request came with: a balance hold is also taken on its budget, and counted in its spend. */
  keyId?: string;
  /**
   * The Idempotency-Key the request claimed (under its request id): the hold is taken only while
   * the request still owns it, and extends the claim to the hold's own expiry.
   */
  idempotencyKey?: string;
  /**
   * False when the caller knows the plan's whole allowance is smaller than `questions`: the
   * allowance is then not tried at all (two statements fewer on every balance-paid request).
   */
  allowanceMayPay?: boolean;
  /** The served model's id, recorded with the hold and on the ledger entry. */
  model?: string;
}

export type ReserveOutcome =
  | { ok: true; reservation: Reservation; standing: Standing }
  | { ok: false; reason: "account_not_found" }
  | { ok: false; reason: "insufficient_funds"; standing: Standing }
  /** The balance could pay, but not within the key's own budget; nothing was held. */
  | { ok: false; reason: "key_budget_exhausted"; standing: Standing; key: KeySpend }
  /** Another request took the Idempotency-Key over (this one's claim had expired); nothing was held. */
  | { ok: false; reason: "idempotency_key_lost" };

/** A key's budget and what it has spent and holds, in micro-euros. */
export interface KeySpend {
  budgetMicro: number;
  spentMicro: number;
  heldMicro: number;
}

/** The response a settled request sends, kept under its Idempotency-Key for replays. */
export interface StoredResponse {
  body: string;
  billedTo: BilledTo;
  standing: Standing;
}

/** What a request actually cost, when it was held for an upper bound. */
export interface SettledCharge {
  inputTokens: number;
  amountMicro: number;
}

export interface BillingRepository {
  /** Holds the request's charge: on the plan if Q questions remain, else on the balance if it covers the amount. */
  reserve(input: HoldRequest): Promise<ReserveOutcome>;
  /**
   * Turns the hold into a ledger entry (and completes the idempotency key, in the same
   * transaction). Undefined when the reservation had already expired and been released, or when
   * another request took the idempotency key over (the hold is then released, nothing charged). The
   * standing returned is of `standingPeriodStart` (the period the caller says is current), or of
   * the hold's own period. `charge` settles less than was held (a gateway's upper-bound hold):
   * never more, whatever it says.
   */
  settle(
    reservation: Reservation,
    idempotency?: { key: string; body: string },
    standingPeriodStart?: number,
    charge?: SettledCharge,
  ): Promise<{ billedTo: BilledTo; standing: Standing } | undefined>;
  /** Gives the hold back; false when it was already settled or released. */
  release(reservationId: string): Promise<boolean>;
  /** Releases expired holds (the idempotency keys and rate windows sweep their own rows). */
  sweep(): Promise<{ reservations: number }>;
  standing(accountId: string, periodStart: number): Promise<Standing | undefined>;
}
