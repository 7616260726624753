/** Records the store hands out. Timestamps are milliseconds since the Unix epoch. */

export interface Account {
  id: string;
  name: string;
  /** Also the anchor of the account's monthly allowance periods. */
  createdAt: number;
  planId: string;
  /** Prepaid balance in micro-euros, including any part held by requests in flight. */
  balanceMicro: number;
  /** The part of the balance held by requests in flight. */
  reservedMicro: number;
}

export interface Plan {
  id: string;
  name: string;
  requestsPerMinute: number;
  /** Questions answered per monthly period before requests are billed to the balance. */
  allowanceQuestions: number;
  /** Micro-euros per million input tokens when a request is billed to the balance. */
  pricePerMillion: number;
  createdAt: number;
}

export type PlanInput = Pick<Plan, "name" | "requestsPerMinute" | "allowanceQuestions" | "pricePerMillion">;

export interface PlansRepository {
  create(input: PlanInput): Plan;
  /** By id or name; changes apply to the next request (allowances are read at reservation). */
  update(idOrName: string, changes: Partial<PlanInput>): Plan;
  list(): Plan[];
  get(idOrName: string): Plan | undefined;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string | null;
  /** The first characters of the key, safe to display; the key itself is never stored. */
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface AuthenticatedKey {
  keyId: string;
  accountId: string;
}

export interface AccountsRepository {
  /** On the plan named (by id or name), or on the "default" plan. */
  create(input: { name: string; plan?: string }): Account;
  list(): Account[];
  get(id: string): Account | undefined;
  setPlan(accountId: string, plan: string): Account;
}

export interface KeysRepository {
  /** The plaintext `key` is returned here once and exists nowhere else afterwards. */
  create(input: { accountId: string; name?: string }): { key: string; record: ApiKeyRecord };
  list(filter?: { accountId?: string }): ApiKeyRecord[];
  /** By key id or by displayed prefix; returns the revoked record, undefined if none matched. */
  revoke(idOrPrefix: string): ApiKeyRecord | undefined;
  /** Undefined for unknown, malformed or revoked keys; revocation takes effect on the very next call (no cache). */
  authenticate(plaintextKey: string): AuthenticatedKey | undefined;
  /** Number of active (not revoked) keys; pass `includeRevoked` to count every key. */
  count(options?: { includeRevoked?: boolean }): number;
}

export interface Store {
  accounts: AccountsRepository;
  keys: KeysRepository;
  plans: PlansRepository;
  billing: BillingRepository;
  ledger: LedgerRepository;
  rateLimits: RateLimitsRepository;
  idempotency: IdempotencyRepository;
  close(): void;
}

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
}

export type ReserveOutcome =
  | { ok: true; reservation: Reservation; standing: Standing }
  | { ok: false; reason: "account_not_found" }
  | { ok: false; reason: "insufficient_funds"; standing: Standing; chargeMicro: number };

/** The response a settled request sends, kept under its Idempotency-Key for replays. */
export interface StoredResponse {
  body: string;
  billedTo: BilledTo;
  standing: Standing;
}

export interface BillingRepository {
  /** Holds the request's charge: on the plan if Q questions remain, else on the balance if it covers T × price. */
  reserve(input: { accountId: string; questions: number; inputTokens: number; requestId: string }): ReserveOutcome;
  /**
   * Turns the hold into a ledger entry (and completes the idempotency key, in the same
   * transaction). Undefined when the reservation had already expired and been released.
   */
  settle(reservation: Reservation, idempotency?: { key: string; body: string }): { billedTo: BilledTo; standing: Standing } | undefined;
  /** Gives the hold back; false when it was already settled or released. */
  release(reservationId: string): boolean;
  /** Releases expired holds and forgets expired idempotency keys and rate windows. */
  sweep(): { reservations: number; idempotencyKeys: number; rateWindows: number };
  standing(accountId: string): Standing | undefined;
}

export interface LedgerEntry {
  id: number;
  accountId: string;
  at: number;
  kind: "top_up" | "charge" | "plan" | "adjustment";
  amountMicro: number;
  questions: number;
  inputTokens: number;
  periodStart: number | null;
  requestId: string | null;
  note: string | null;
}

export interface Usage {
  accountId: string;
  period: { start: number; end: number };
  used: number;
  reserved: number;
  allowance: number;
  balanceMicro: number;
  reservedMicro: number;
}

export interface LedgerCheck {
  ok: boolean;
  accounts: number;
  /** Accounts whose balance or period usage differs from the sum of their ledger entries. */
  mismatches: { accountId: string; what: string; unit: "micro_eur" | "questions"; column: number; ledgerSum: number }[];
}

export interface LedgerRepository {
  topUp(accountId: string, amountMicro: number, note?: string): { entry: LedgerEntry; balanceMicro: number };
  entries(accountId: string, options?: { limit?: number }): LedgerEntry[];
  usage(accountId: string): Usage | undefined;
  check(): LedgerCheck;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets (at least 1). */
  resetSeconds: number;
}

export interface RateLimitsRepository {
  /** Counts one attempt in the account's current minute; undefined for an unknown account. */
  hit(accountId: string): RateLimitDecision | undefined;
}

export type IdempotencyClaim =
  | { kind: "claimed" }
  | { kind: "replay"; response: StoredResponse }
  | { kind: "running" }
  | { kind: "mismatch" };

export interface IdempotencyRepository {
  claim(input: { accountId: string; key: string; requestHash: string; owner: string }): IdempotencyClaim;
  /** Forgets a claim whose request failed, so a retry runs again (failures charge nothing). */
  abandon(input: { accountId: string; key: string; owner: string }): void;
}

/** Longest accepted account or key name; names are labels, not documents. */
export const MAX_NAME_LENGTH = 200;
