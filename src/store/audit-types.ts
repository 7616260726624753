/** Who did an admin action, as the audit log names them. */
export type AdminActor =
  /** JUDGE_ADMIN_TOKEN, the one shared token of the server's settings. */
  | { kind: "env-token" }
  /** A named admin token (`judge admins create`). */
  | { kind: "admin-token"; tokenId: string; name: string }
  /** The `judge` CLI, which writes to the database directly: the operating system's user running it. */
  | { kind: "cli"; user: string };

export type AuditObjectKind = "account" | "key" | "plan" | "admin_token";

/** One admin change, as recorded; `details` says what changed and never holds a key or token. */
export interface AdminAction {
  /** `<object>.<verb>`, e.g. `account.disable`, `balance.top_up`, `key.revoke`. */
  action: string;
  object: { kind: AuditObjectKind; id: string };
  /** The account it concerns (the account itself, a key's, a top-up's), so an account's history lists it. */
  accountId?: string | null;
  details?: Record<string, unknown>;
}

export interface AuditEntry {
  id: number;
  at: number;
  /** `env-token`, `token:<name>` or `cli:<user>`. */
  actor: string;
  /** The admin token's id (`adm_…`) when a named token did it. */
  actorTokenId: string | null;
  action: string;
  objectKind: AuditObjectKind;
  objectId: string;
  accountId: string | null;
  details: Record<string, unknown>;
}

export interface AuditRepository {
  /** Newest first; `before` (an entry id) pages further back; `accountId` keeps that account's entries. */
  page(query: { accountId?: string; limit: number; before?: number }): Promise<{ entries: AuditEntry[]; nextBefore: number | null }>;
}

export interface AdminTokenRecord {
  id: string;
  name: string;
  /** The first characters of the token, safe to display; the token itself is never stored. */
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface AdminTokensRepository {
  /** The plaintext `token` is returned here once and exists nowhere else afterwards. */
  create(input: { name: string }, by?: AdminActor): Promise<{ token: string; record: AdminTokenRecord }>;
  list(): Promise<AdminTokenRecord[]>;
  /** By id, or by the name of an active token; undefined when none matched. Revoking twice changes nothing. */
  revoke(idOrName: string, by?: AdminActor): Promise<AdminTokenRecord | undefined>;
  /** The active token's record, or undefined (unknown, malformed, revoked): asked on every admin request. */
  authenticate(plaintextToken: string): Promise<AdminTokenRecord | undefined>;
}
