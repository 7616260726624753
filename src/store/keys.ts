import BetterSqlite3 from "better-sqlite3";
import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey } from "./api-key.js";
import type { Database } from "./db.js";
import { StoreError } from "./errors.js";
import { normalizeName } from "./names.js";
import { newId } from "./random.js";
import type { ApiKeyRecord, KeysRepository } from "./types.js";

/**
 * last_used_at is refreshed at most this often per key, so steady traffic on a key costs
 * a read per request and a write per minute instead of a write transaction per request.
 */
export const LAST_USED_RESOLUTION_MS = 60_000;

interface KeyRow {
  id: string;
  account_id: string;
  name: string | null;
  prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

const KEY_COLUMNS = "id, account_id, name, prefix, created_at, last_used_at, revoked_at";

const toRecord = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  prefix: row.prefix,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
});

export function createKeysRepository(db: Database, now: () => number): KeysRepository {
  const statements = prepareStatements(db);

  function create(input: { accountId: string; name?: string }) {
    const key = generateApiKey();
    const record: ApiKeyRecord = {
      id: newId("key"),
      accountId: input.accountId,
      name: input.name === undefined ? null : normalizeName(input.name, "Key name"),
      prefix: displayPrefix(key),
      createdAt: now(),
      lastUsedAt: null,
      revokedAt: null,
    };
    try {
      statements.insert.run({ ...toRow(record), hash: hashApiKey(key) });
    } catch (error) {
      // The foreign key decides atomically; checking the account first would race with deletes.
      if (error instanceof BetterSqlite3.SqliteError && error.code === "SQLITE_CONSTRAINT_FOREIGNKEY") {
        throw new StoreError("account_not_found", `No account with id ${input.accountId}`);
      }
      throw error;
    }
    return { key, record };
  }

  function revoke(idOrPrefix: string): ApiKeyRecord | undefined {
    const matches = statements.selectByIdOrPrefix.all(idOrPrefix, idOrPrefix);
    if (matches.length > 1) {
      const ids = matches.map((row) => row.id).join(", ");
      throw new StoreError(
        "ambiguous_prefix",
        `Prefix ${idOrPrefix} matches ${matches.length} keys (${ids}); revoke by key id instead`,
      );
    }
    const match = matches[0];
    if (!match) return undefined;
    // Revoking twice keeps the original revocation time.
    statements.revoke.run(now(), match.id);
    return toRecord(statements.selectById.get(match.id)!);
  }

  function authenticate(plaintextKey: string) {
    if (!isWellFormedApiKey(plaintextKey)) return undefined;
    const row = statements.selectForAuth.get(hashApiKey(plaintextKey));
    if (!row || row.revoked_at !== null) return undefined;
    const at = now();
    if (row.last_used_at === null || at - row.last_used_at >= LAST_USED_RESOLUTION_MS) {
      statements.touch.run(at, row.id);
    }
    return { keyId: row.id, accountId: row.account_id };
  }

  return {
    create,
    list(filter = {}) {
      const rows =
        filter.accountId === undefined
          ? statements.selectAll.all()
          : statements.selectByAccount.all(filter.accountId);
      return rows.map(toRecord);
    },
    revoke,
    authenticate,
    count: (options = {}) =>
      (options.includeRevoked ? statements.countAll : statements.countActive).get() as number,
  };
}

function toRow(record: ApiKeyRecord): KeyRow {
  return {
    id: record.id,
    account_id: record.accountId,
    name: record.name,
    prefix: record.prefix,
    created_at: record.createdAt,
    last_used_at: record.lastUsedAt,
    revoked_at: record.revokedAt,
  };
}

function prepareStatements(db: Database) {
  const ordered = "ORDER BY created_at, id";
  return {
    insert: db.prepare<[KeyRow & { hash: string }]>(
      `INSERT INTO api_keys (${KEY_COLUMNS}, hash) VALUES
       (@id, @account_id, @name, @prefix, @created_at, @last_used_at, @revoked_at, @hash)`,
    ),
    selectAll: db.prepare<[], KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ${ordered}`),
    selectByAccount: db.prepare<[string], KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = ? ${ordered}`,
    ),
    selectById: db.prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`),
    selectByIdOrPrefix: db.prepare<[string, string], KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ? OR prefix = ? ${ordered}`,
    ),
    revoke: db.prepare<[number, string]>(
      "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
    ),
    selectForAuth: db.prepare<[string], Pick<KeyRow, "id" | "account_id" | "last_used_at" | "revoked_at">>(
      "SELECT id, account_id, last_used_at, revoked_at FROM api_keys WHERE hash = ?",
    ),
    touch: db.prepare<[number, string]>("UPDATE api_keys SET last_used_at = ? WHERE id = ?"),
    countActive: db.prepare("SELECT COUNT(*) FROM api_keys WHERE revoked_at IS NULL").pluck(),
    countAll: db.prepare("SELECT COUNT(*) FROM api_keys").pluck(),
  };
}
