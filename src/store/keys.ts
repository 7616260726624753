import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey } from "./api-key.js";
import type { Database } from "./database.js";
import { StoreError } from "../record-errors.js";
import { normalizeName } from "./names.js";
import { boundedInteger, PLAN_LIMITS } from "./plans.js";
import { newId } from "./random.js";
import { audited } from "./audit.js";
import type { AdminActor, ApiKeyRecord, AuthenticatedKey, KeyChanges, KeyLimits, KeysRepository } from "./types.js";
import type { RowOf } from "./schema.js";

/**
 * last_used_at is refreshed at most this often per key, so steady traffic on a key costs
 * a read per request and a write per minute instead of a write transaction per request.
 */
export const LAST_USED_RESOLUTION_MS = 60_000;

const COLUMNS = [
  "id",
  "account_id",
  "name",
  "prefix",
  "created_at",
  "last_used_at",
  "revoked_at",
  "requests_per_minute",
  "budget_micro",
  "expires_at",
  "spent_micro",
  "held_micro",
] as const;

type KeyRow = RowOf<"api_keys", (typeof COLUMNS)[number]>;

interface AuthenticatedRow {
  id: string;
  account_id: string;
  last_used_at: number | null;
  revoked_at: number | null;
  disabled_at: number | null;
  key_rpm: number | null;
  expires_at: number | null;
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
  limits: { requestsPerMinute: row.requests_per_minute, budgetMicro: row.budget_micro, expiresAt: row.expires_at },
  spentMicro: row.spent_micro,
  heldMicro: row.held_micro,
});

/** The largest budget a key may have: any amount of micro-euros a JavaScript number holds exactly. */
const MAX_BUDGET_MICRO = Number.MAX_SAFE_INTEGER;

/** Each limit checked (null clears it), so a bad value is a 400 and never reaches a CHECK. */
function checkedLimits(limits: Partial<KeyLimits>): Partial<KeyLimits> {
  const out: Partial<KeyLimits> = {};
  const each = <K extends keyof KeyLimits>(field: K, check: (value: number) => number) => {
    const value = limits[field];
    if (value !== undefined) out[field] = value === null ? null : check(value);
  };
  each("requestsPerMinute", (v) => boundedInteger(v, "a key's requests per minute", 1, PLAN_LIMITS.requestsPerMinute));
  each("budgetMicro", (v) => boundedInteger(v, "a key's budget (µ€)", 0, MAX_BUDGET_MICRO));
  each("expiresAt", (v) => boundedInteger(v, "a key's expiry (ms since the epoch)", 0, 8.64e15));
  return out;
}

const limitColumns = (limits: Partial<KeyLimits>) => ({
  ...(limits.requestsPerMinute !== undefined && { requests_per_minute: limits.requestsPerMinute }),
  ...(limits.budgetMicro !== undefined && { budget_micro: limits.budgetMicro }),
  ...(limits.expiresAt !== undefined && { expires_at: limits.expiresAt }),
});

export function createKeysRepository(database: Database, now: () => number): KeysRepository {
  const { db } = database;
  // Every request runs these two (plain SQL: see Statement in database.ts).
  const findByHash = database.statement<AuthenticatedRow>(
    `SELECT k.id, k.account_id, k.last_used_at, k.revoked_at, a.disabled_at, k.requests_per_minute AS key_rpm, k.expires_at,
            a.created_at, a.plan_id,
            p.requests_per_minute, p.allowance_questions, p.price_per_million, p.allowed_models
     FROM api_keys AS k JOIN accounts AS a ON a.id = k.account_id JOIN plans AS p ON p.id = a.plan_id
     WHERE k.hash = ?`,
  );
  const touch = database.statement<never>(`UPDATE api_keys SET last_used_at = ? WHERE id = ?`);
  const listed = db.selectFrom("api_keys").select(COLUMNS).orderBy("created_at").orderBy("id");

  async function create(input: { accountId: string; name?: string } & Partial<KeyLimits>, by?: AdminActor) {
    const key = generateApiKey();
    const limits = checkedLimits(input);
    const createdAt = now();
    // A key born expired could never be used: most likely a mistyped date, so it is refused
    // rather than created (an existing key may still be given a past expiry, to end it at once).
    if (limits.expiresAt != null && limits.expiresAt <= createdAt) {
      throw new StoreError("invalid_input", `a new key's expiry must be in the future; ${new Date(limits.expiresAt).toISOString()} has passed`);
    }
    const record: ApiKeyRecord = {
      id: newId("key"),
      accountId: input.accountId,
      name: input.name === undefined ? null : normalizeName(input.name, "Key name"),
      prefix: displayPrefix(key),
      createdAt,
      lastUsedAt: null,
      revokedAt: null,
      limits: { requestsPerMinute: limits.requestsPerMinute ?? null, budgetMicro: limits.budgetMicro ?? null, expiresAt: limits.expiresAt ?? null },
      spentMicro: 0,
      heldMicro: 0,
    };
    try {
      const row = {
        id: record.id,
        account_id: record.accountId,
        name: record.name,
        prefix: record.prefix,
        hash: hashApiKey(key),
        created_at: record.createdAt,
        last_used_at: null,
        revoked_at: null,
        requests_per_minute: record.limits.requestsPerMinute,
        budget_micro: record.limits.budgetMicro,
        expires_at: record.limits.expiresAt,
      };
      await audited(
        database,
        now,
        by,
        (trx) => trx.insertInto("api_keys").values(row).execute(),
        () => ({
          action: "key.create",
          object: { kind: "key", id: record.id },
          accountId: record.accountId,
          details: { name: record.name, prefix: record.prefix, ...record.limits },
        }),
      );
    } catch (error) {
      // The foreign key decides atomically; checking the account first would race with deletes.
      if (database.isForeignKeyViolation(error)) throw new StoreError("account_not_found", `No account with id ${input.accountId}`);
      throw error;
    }
    return { key, record };
  }

  /** The one key with this id or displayed prefix; `verb` says what to do by id when a prefix is ambiguous. */
  async function find(idOrPrefix: string, verb: string): Promise<KeyRow | undefined> {
    // An id always means that key, even if another key's prefix were equal to it.
    const matches = await listed.where((eb) => eb.or([eb("id", "=", idOrPrefix), eb("prefix", "=", idOrPrefix)])).execute();
    const byId = matches.find((row) => row.id === idOrPrefix);
    if (byId) return byId;
    if (matches.length > 1) {
      const ids = matches.map((row) => row.id).join(", ");
      throw new StoreError("ambiguous_prefix", `Prefix ${idOrPrefix} matches ${matches.length} keys (${ids}); ${verb} by key id instead`);
    }
    return matches[0];
  }

  async function update(idOrPrefix: string, changes: KeyChanges, by?: AdminActor): Promise<ApiKeyRecord | undefined> {
    const limits = checkedLimits(changes);
    const name = changes.name === undefined ? undefined : changes.name === null ? null : normalizeName(changes.name, "Key name");
    const match = await find(idOrPrefix, "change it");
    if (!match) return undefined;
    const set = { ...limitColumns(limits), ...(name !== undefined && { name }) };
    // One UPDATE of the named columns only: a budget lowered below what is spent just refuses the next paid request.
    if (Object.keys(set).length > 0) {
      await audited(
        database,
        now,
        by,
        (trx) => trx.updateTable("api_keys").set(set).where("id", "=", match.id).execute(),
        () => ({ action: "key.update", object: { kind: "key", id: match.id }, accountId: match.account_id, details: set }),
      );
    }
    return toRecord(await listed.where("id", "=", match.id).executeTakeFirstOrThrow());
  }

  async function revoke(idOrPrefix: string, by?: AdminActor): Promise<ApiKeyRecord | undefined> {
    const match = await find(idOrPrefix, "revoke");
    if (!match) return undefined;
    // Revoking twice keeps the original revocation time, and records nothing new.
    await audited(
      database,
      now,
      by,
      (trx) => trx.updateTable("api_keys").set({ revoked_at: now() }).where("id", "=", match.id).where("revoked_at", "is", null).executeTakeFirst(),
      (result) =>
        result.numUpdatedRows > 0n
          ? { action: "key.revoke", object: { kind: "key", id: match.id }, accountId: match.account_id, details: { name: match.name, prefix: match.prefix } }
          : undefined,
    );
    return toRecord(await listed.where("id", "=", match.id).executeTakeFirstOrThrow());
  }

  /** One query: the key, its account and the account's plan, so a request needs no second read. */
  async function authenticate(plaintextKey: string): Promise<AuthenticatedKey | undefined> {
    if (!isWellFormedApiKey(plaintextKey)) return undefined;
    const [row] = await findByHash.all(db, [hashApiKey(plaintextKey)]);
    if (!row || row.revoked_at !== null) return undefined;
    // Read with the key, in the same query: a disable applies to the very next request on every instance.
    if (row.disabled_at !== null) throw new StoreError("account_disabled", `the account of this API key is disabled`);
    const at = now();
    const expired = row.expires_at !== null && row.expires_at <= at;
    if (!expired && (row.last_used_at === null || at - row.last_used_at >= LAST_USED_RESOLUTION_MS)) await touch.all(db, [at, row.id]);
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
      keyRequestsPerMinute: row.key_rpm,
      ...(expired && { expiredAt: row.expires_at! }),
    };
  }

  return {
    create,
    list: async (filter = {}) => (await (filter.accountId === undefined ? listed : listed.where("account_id", "=", filter.accountId)).execute()).map(toRecord),
    update,
    revoke,
    authenticate,
    async count(options = {}) {
      let query = db.selectFrom("api_keys").select((eb) => eb.fn.countAll<number>().as("n"));
      if (!options.includeRevoked) query = query.where("revoked_at", "is", null);
      return Number((await query.executeTakeFirstOrThrow()).n);
    },
  };
}
