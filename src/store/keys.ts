import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey } from "./api-key.js";
import type { Database } from "./database.js";
import { StoreError } from "./errors.js";
import { normalizeName } from "./names.js";
import { newId } from "./random.js";
import type { ApiKeyRecord, AuthenticatedKey, KeysRepository } from "./types.js";

/**
 * last_used_at is refreshed at most this often per key, so steady traffic on a key costs
 * a read per request and a write per minute instead of a write transaction per request.
 */
export const LAST_USED_RESOLUTION_MS = 60_000;

const COLUMNS = ["id", "account_id", "name", "prefix", "created_at", "last_used_at", "revoked_at"] as const;

interface KeyRow {
  id: string;
  account_id: string;
  name: string | null;
  prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

interface AuthenticatedRow {
  id: string;
  account_id: string;
  last_used_at: number | null;
  revoked_at: number | null;
  created_at: number;
  plan_id: string;
  requests_per_minute: number;
  allowance_questions: number;
  price_per_million: number;
  allowed_models: string | null;
}

const toRecord = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  prefix: row.prefix,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
});

export function createKeysRepository(database: Database, now: () => number): KeysRepository {
  const { db } = database;
  // Every request runs these two (plain SQL: see Statement in database.ts).
  const findByHash = database.statement<AuthenticatedRow>(
    `SELECT k.id, k.account_id, k.last_used_at, k.revoked_at, a.created_at, a.plan_id,
            p.requests_per_minute, p.allowance_questions, p.price_per_million, p.allowed_models
     FROM api_keys AS k JOIN accounts AS a ON a.id = k.account_id JOIN plans AS p ON p.id = a.plan_id
     WHERE k.hash = ?`,
  );
  const touch = database.statement<never>(`UPDATE api_keys SET last_used_at = ? WHERE id = ?`);
  const listed = db.selectFrom("api_keys").select(COLUMNS).orderBy("created_at").orderBy("id");

  async function create(input: { accountId: string; name?: string }) {
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
      await db
        .insertInto("api_keys")
        .values({
          id: record.id,
          account_id: record.accountId,
          name: record.name,
          prefix: record.prefix,
          hash: hashApiKey(key),
          created_at: record.createdAt,
          last_used_at: null,
          revoked_at: null,
        })
        .execute();
    } catch (error) {
      // The foreign key decides atomically; checking the account first would race with deletes.
      if (database.isForeignKeyViolation(error)) throw new StoreError("account_not_found", `No account with id ${input.accountId}`);
      throw error;
    }
    return { key, record };
  }

  async function revoke(idOrPrefix: string): Promise<ApiKeyRecord | undefined> {
    const matches = await listed.where((eb) => eb.or([eb("id", "=", idOrPrefix), eb("prefix", "=", idOrPrefix)])).execute();
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
    await db.updateTable("api_keys").set({ revoked_at: now() }).where("id", "=", match.id).where("revoked_at", "is", null).execute();
    return toRecord(await listed.where("id", "=", match.id).executeTakeFirstOrThrow());
  }

  /** One query: the key, its account and the account's plan, so a request needs no second read. */
  async function authenticate(plaintextKey: string): Promise<AuthenticatedKey | undefined> {
    if (!isWellFormedApiKey(plaintextKey)) return undefined;
    const [row] = await findByHash.all(db, [hashApiKey(plaintextKey)]);
    if (!row || row.revoked_at !== null) return undefined;
    const at = now();
    if (row.last_used_at === null || at - row.last_used_at >= LAST_USED_RESOLUTION_MS) await touch.all(db, [at, row.id]);
    return {
      keyId: row.id,
      accountId: row.account_id,
      terms: {
        createdAt: row.created_at,
        planId: row.plan_id,
        requestsPerMinute: row.requests_per_minute,
        allowanceQuestions: row.allowance_questions,
        pricePerMillion: row.price_per_million,
        ...(row.allowed_models !== null && { allowedModels: JSON.parse(row.allowed_models) as string[] }),
      },
    };
  }

  return {
    create,
    list: async (filter = {}) =>
      (await (filter.accountId === undefined ? listed : listed.where("account_id", "=", filter.accountId)).execute()).map(toRecord),
    revoke,
    authenticate,
    async count(options = {}) {
      let query = db.selectFrom("api_keys").select((eb) => eb.fn.countAll<number>().as("n"));
      if (!options.includeRevoked) query = query.where("revoked_at", "is", null);
      return Number((await query.executeTakeFirstOrThrow()).n);
    },
  };
}
