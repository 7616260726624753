import type { AdminActor, AdminTokensRepository, AuditRepository } from "./audit-types.js";
import type { BillingRepository, StoredResponse } from "./billing-types.js";
import type { LedgerRepository } from "./ledger-types.js";
import type { ReportsRepository } from "./reports-types.js";

/** Each repository's types beside it (audit, billing, ledger, reports), and here as one set. */
export type * from "./audit-types.js";
export type * from "./billing-types.js";
export type * from "./ledger-types.js";
export type * from "./reports-types.js";

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
  /** When the account was disabled (its keys then get 401 account_disabled); null while enabled. */
  disabledAt: number | null;
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
  /** The model ids its keys may use (docs/engines/many-models.md); absent: every model. */
  allowedModels?: string[];
}

export type PlanInput = Pick<Plan, "name" | "requestsPerMinute" | "allowanceQuestions" | "pricePerMillion"> & {
  /** null clears the restriction (an update); absent keeps it. */
  allowedModels?: string[] | null;
};

export interface PlansRepository {
  create(input: PlanInput, by?: AdminActor): Promise<Plan>;
  /** By id or name; changes apply to the next request (terms are read at every request). */
  update(idOrName: string, changes: Partial<PlanInput>, by?: AdminActor): Promise<Plan>;
  list(): Promise<Plan[]>;
  get(idOrName: string): Promise<Plan | undefined>;
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
  /** The key's own limits, on top of the plan's; null: none. */
  limits: KeyLimits;
  /** Micro-euros charged to the balance through this key, over its lifetime (since key limits exist). */
  spentMicro: number;
  /** Micro-euros held against the key by its requests in flight. */
  heldMicro: number;
}

/** What a key may do on its own, whatever its plan allows; null is "no limit of its own". */
export interface KeyLimits {
  /** Requests per minute through this key, counted beside the account's plan limit. */
  requestsPerMinute: number | null;
  /** The most micro-euros the key may ever have charged to the balance (spent + held). */
  budgetMicro: number | null;
  /** From this instant on the key is refused (401 key_expired). */
  expiresAt: number | null;
}

/** A change to a key: `name` or a limit set to a value, or to null to clear it; absent fields stay. */
export interface KeyChanges extends Partial<KeyLimits> {
  name?: string | null;
}

/** What a request needs to know of its account: read with the key, in the same query. */
export interface AccountTerms {
  /** Also the anchor of the account's allowance periods and of its rate-limit windows. */
  createdAt: number;
  planId: string;
  requestsPerMinute: number;
  allowanceQuestions: number;
  pricePerMillion: number;
  /** The plan's allowed model ids; absent: every model. */
  allowedModels?: string[];
}

export interface AuthenticatedKey {
  keyId: string;
  accountId: string;
  terms: AccountTerms;
  /** The key's own per-minute limit (null: the plan's alone applies). */
  keyRequestsPerMinute: number | null;
  /** Set when the key has expired: the request is refused with 401 key_expired. */
  expiredAt?: number;
}

/** An account as a list shows it: its plan, and its latest usage row that has begun. */
export interface AccountListing {
  account: Account;
  plan: Plan;
  /**
   * The usage row with the latest period start not after now, or null. The store knows nothing
   * of periods: the caller compares `periodStart` with the account's current period.
   */
  latestUsage: { periodStart: number; used: number; reserved: number } | null;
}

export interface AccountPageQuery {
  /** Part of the name (case-insensitive for ASCII letters) or the whole account id. */
  search?: string;
  limit: number;
  offset: number;
}

export interface AccountPage {
  /** Oldest first. */
  accounts: AccountListing[];
  /** How many accounts match the search, on every page. */
  total: number;
}

export interface AccountsRepository {
  /** On the plan named (by id or name), or on the "default" plan. `by` records it in the audit log. */
  create(input: { name: string; plan?: string }, by?: AdminActor): Promise<Account>;
  list(): Promise<Account[]>;
  /** One page of accounts with their plans and usage, in one query. */
  page(query: AccountPageQuery): Promise<AccountPage>;
  get(id: string): Promise<Account | undefined>;
  setPlan(accountId: string, plan: string, by?: AdminActor): Promise<Account>;
  rename(accountId: string, name: string, by?: AdminActor): Promise<Account>;
  /** Disabling keeps everything; its keys get 401 account_disabled from their next request, on every instance. */
  setDisabled(accountId: string, disabled: boolean, by?: AdminActor): Promise<Account>;
}

export interface KeysRepository {
  /** The plaintext `key` is returned here once and exists nowhere else afterwards. */
  create(input: { accountId: string; name?: string } & Partial<KeyLimits>, by?: AdminActor): Promise<{ key: string; record: ApiKeyRecord }>;
  list(filter?: { accountId?: string }): Promise<ApiKeyRecord[]>;
  /** By key id or displayed prefix: renames it or changes its limits; undefined if none matched. */
  update(idOrPrefix: string, changes: KeyChanges, by?: AdminActor): Promise<ApiKeyRecord | undefined>;
  /** By key id or by displayed prefix; returns the revoked record, undefined if none matched. */
  revoke(idOrPrefix: string, by?: AdminActor): Promise<ApiKeyRecord | undefined>;
  /**
   * Undefined for unknown, malformed or revoked keys; StoreError account_disabled for a key of a
   * disabled account. Read in one query on every call (no cache): revocation and disabling apply at
   * once. An expired key comes back with `expiredAt` set, so the edge can say why it is refused.
   */
  authenticate(plaintextKey: string): Promise<AuthenticatedKey | undefined>;
  /** Number of active (not revoked) keys; pass `includeRevoked` to count every key. */
  count(options?: { includeRevoked?: boolean }): Promise<number>;
}

export interface Store {
  /** Which engine holds the data, and where (a file path, or a URL without its password). */
  readonly dialect: "sqlite" | "postgres";
  readonly location: string;
  accounts: AccountsRepository;
  keys: KeysRepository;
  plans: PlansRepository;
  billing: BillingRepository;
  ledger: LedgerRepository;
  rateWindows: RateWindowsRepository;
  idempotency: IdempotencyRepository;
  audit: AuditRepository;
  adminTokens: AdminTokensRepository;
  /** The console's reports across accounts, and the server errors the edge records (reports.ts). */
  reports: ReportsRepository;
  /** Resolves when the database answers; rejects with StoreError database_unavailable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Fixed-window counters in the database, for the rate limiter when there is no Redis. */
export interface RateWindowsRepository {
  /** Counts one more in `key`'s window, unless it already reached `limit`: the new count, or undefined. */
  increment(input: { key: string; windowStart: number; limit: number }): Promise<number | undefined>;
  /** Forgets the windows that started over RATE_WINDOW_RETENTION_MS ago: how many. */
  sweep(): Promise<number>;
}

export type IdempotencyClaim =
  | { kind: "claimed" }
  | { kind: "replay"; response: StoredResponse }
  | { kind: "running" }
  | { kind: "mismatch" };

export interface IdempotencyRepository {
  claim(input: { accountId: string; key: string; requestHash: string; owner: string }): Promise<IdempotencyClaim>;
  /** Forgets a claim whose request failed, so a retry runs again (failures charge nothing). */
  abandon(input: { accountId: string; key: string; owner: string }): Promise<void>;
  /** Forgets the keys past their expiry (a replay's 24 hours, a running claim's hold): how many. */
  sweep(): Promise<number>;
}

export { MAX_NAME_LENGTH } from "../record-limits.js";
