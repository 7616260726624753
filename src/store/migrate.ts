import { sql } from "kysely";
import type { Database, Queries } from "./database.js";
import { StoreError } from "../record-errors.js";
import { MIGRATIONS, type Migration } from "./migrations/index.js";

export { MIGRATIONS, type Migration } from "./migrations/index.js";

export interface MigrationResult {
  /** Versions applied by this call, in order; empty when the schema was already current. */
  applied: number[];
  /** Schema version after the call. */
  version: number;
}

/** Thrown for a malformed migration list: a programming error, not a user error. */
export function assertWellOrdered(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`Migrations must be numbered 1, 2, 3… without gaps; position ${index} has version ` + `${migration.version} (${migration.name})`);
    }
  });
}

async function ensureMigrationsTable(database: Database, trx: Queries): Promise<void> {
  const integer = database.dialect === "sqlite" ? "INTEGER" : "BIGINT";
  const strict = database.dialect === "sqlite" ? " STRICT" : "";
  await sql
    .raw(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at ${integer} NOT NULL)${strict}`,
    )
    .execute(trx);
}

async function schemaVersion(trx: Queries): Promise<number> {
  const row = await trx
    .selectFrom("schema_migrations")
    .select((eb) => eb.fn.max("version").as("version"))
    .executeTakeFirst();
  return Number(row?.version ?? 0);
}

/** The schema version the database is at (0 for an empty database). */
export async function currentSchemaVersion(database: Database): Promise<number> {
  return database.transaction(async (trx) => {
    await ensureMigrationsTable(database, trx);
    return schemaVersion(trx);
  });
}

/**
 * Brings the database up to the latest known migration, one transaction per migration. Safe to
 * call on every start and from many processes at once: each migration runs under the engine's
 * migration lock and re-reads the version first. Refuses a database newer than this code.
 */
export async function migrate(database: Database, options: { migrations?: readonly Migration[]; now?: () => number } = {}): Promise<MigrationResult> {
  const migrations = options.migrations ?? MIGRATIONS;
  const now = options.now ?? Date.now;
  assertWellOrdered(migrations);
  const applied: number[] = [];
  for (;;) {
    const version = await database.transaction(async (trx) => {
      await database.lockForMigration(trx);
      await ensureMigrationsTable(database, trx);
      const found = await schemaVersion(trx);
      if (found > migrations.length) {
        throw new StoreError(
          "schema_too_new",
          `Database schema is at version ${found}, but this build only knows up to version ` +
            `${migrations.length}; upgrade the service before using this database`,
        );
      }
      const next = migrations[found];
      if (!next) return undefined;
      await database.runScript(trx, next.sql[database.dialect]);
      await trx.insertInto("schema_migrations").values({ version: next.version, name: next.name, applied_at: now() }).execute();
      return next.version;
    });
    if (version === undefined) return { applied, version: migrations.length };
    applied.push(version);
  }
}
