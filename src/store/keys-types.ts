import type { AdminActor } from "./audit-types.js";

/** What the keys repository (keys.ts) takes and hands out; re-exported by types.ts. Timestamps are milliseconds since the Unix epoch. */

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
