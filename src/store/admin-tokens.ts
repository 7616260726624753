import { createHash } from "node:crypto";
import { audited } from "./audit.js";
import type { AdminTokenRecord, AdminTokensRepository } from "./audit-types.js";
import type { Database } from "./database.js";
import { StoreError } from "../record-errors.js";
import { normalizeName } from "./names.js";
import { newId, randomBase62 } from "./random.js";
import type { RowOf } from "./schema.js";

/**
 * Admin tokens: `tja_` and 40 base62 characters (~238 bits), a marker of their own so a leaked
 * one is told apart from an API key (`tjs_`). Stored as SHA-256 only, as keys are (api-key.ts).
 */
const TOKEN_PATTERN = /^tja_[0-9A-Za-z]{40}$/;
const PREFIX_LENGTH = 12;
/** last_used_at is refreshed at most this often per token. */
const LAST_USED_RESOLUTION_MS = 60_000;

export const isWellFormedAdminToken = (value: string) => TOKEN_PATTERN.test(value);
const hash = (token: string) => createHash("sha256").update(token, "utf8").digest("hex");

const COLUMNS = ["id", "name", "prefix", "created_at", "last_used_at", "revoked_at"] as const;
type Row = RowOf<"admin_tokens", (typeof COLUMNS)[number]>;
const toRecord = (row: Row): AdminTokenRecord => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
});

export function createAdminTokensRepository(database: Database, now: () => number): AdminTokensRepository {
  const { db } = database;
  const listed = db.selectFrom("admin_tokens").select(COLUMNS).orderBy("created_at").orderBy("id");
  return {
    async create(input, by) {
      const name = normalizeName(input.name, "Admin token name");
      const token = `tja_${randomBase62(40)}`;
      const record: AdminTokenRecord = { id: newId("adm"), name, prefix: token.slice(0, PREFIX_LENGTH), createdAt: now(), lastUsedAt: null, revokedAt: null };
      try {
        await audited(
          database,
          now,
          by,
          (trx) =>
            trx
              .insertInto("admin_tokens")
              .values({ id: record.id, name, prefix: record.prefix, hash: hash(token), created_at: record.createdAt, last_used_at: null, revoked_at: null })
              .execute(),
          () => ({ action: "admin_token.create", object: { kind: "admin_token", id: record.id }, details: { name, prefix: record.prefix } }),
        );
      } catch (error) {
        if (database.isUniqueViolation(error))
          throw new StoreError("invalid_input", `An active admin token is already named ${name}; choose another name or revoke it first`);
        throw error;
      }
      return { token, record };
    },
    list: async () => (await listed.execute()).map(toRecord),
    async revoke(idOrName, by) {
      const byId = await listed.where("id", "=", idOrName).executeTakeFirst();
      const match = byId ?? (await listed.where("name", "=", idOrName).where("revoked_at", "is", null).executeTakeFirst());
      if (!match) return undefined;
      return audited(
        database,
        now,
        by,
        async (trx) => {
          // Revoking twice keeps the first revocation time, and records nothing new.
          const result = await trx
            .updateTable("admin_tokens")
            .set({ revoked_at: now() })
            .where("id", "=", match.id)
            .where("revoked_at", "is", null)
            .executeTakeFirst();
          const record = toRecord(await trx.selectFrom("admin_tokens").select(COLUMNS).where("id", "=", match.id).executeTakeFirstOrThrow());
          return { record, changed: result.numUpdatedRows > 0n };
        },
        ({ record, changed }) =>
          changed
            ? { action: "admin_token.revoke", object: { kind: "admin_token", id: record.id }, details: { name: record.name, prefix: record.prefix } }
            : undefined,
      ).then(({ record }) => record);
    },
    async authenticate(plaintextToken) {
      if (!isWellFormedAdminToken(plaintextToken)) return undefined;
      const row = await db.selectFrom("admin_tokens").select(COLUMNS).where("hash", "=", hash(plaintextToken)).executeTakeFirst();
      if (!row || row.revoked_at !== null) return undefined;
      const at = now();
      if (row.last_used_at === null || at - row.last_used_at >= LAST_USED_RESOLUTION_MS) {
        await db.updateTable("admin_tokens").set({ last_used_at: at }).where("id", "=", row.id).execute();
      }
      return toRecord(row);
    },
  };
}
