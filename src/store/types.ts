/** Records the store hands out. Timestamps are milliseconds since the Unix epoch. */

export interface Account {
  id: string;
  name: string;
  createdAt: number;
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
  create(input: { name: string }): Account;
  list(): Account[];
  get(id: string): Account | undefined;
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
  close(): void;
}

/** Longest accepted account or key name; names are labels, not documents. */
export const MAX_NAME_LENGTH = 200;
