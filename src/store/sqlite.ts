import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { messageOf } from "../error-message.js";
import type { Database, Queries, Statement } from "./database.js";
import { StoreError } from "../record-errors.js";
import { SafeIntegersPlugin, safeRows } from "./safe-integers.js";
import { FALLBACK_AUTOCHECKPOINT_PAGES, startBackgroundCheckpoints } from "./sqlite-checkpointer.js";
import { createGroupCommit } from "./sqlite-group-commit.js";
import type { Tables } from "./schema.js";

/** How long a writer waits for another process's lock before failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5_000;

/** `:memory:` and `""` (a private temporary database) have no file to create or journal. */
function isFileBacked(path: string): boolean {
  return path !== ":memory:" && path !== "";
}

/** Codes that mean "the database cannot serve now", not "this request is wrong". */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY|CORRUPT|NOTADB|PROTOCOL)/;

/**
 * Opens the SQLite database at `path`, creating it (and its directory) unless `create` is
 * false. Throws StoreError "database_unavailable" if the file cannot be opened as a database.
 */
export function openSqlite(path: string, options: { create?: boolean; backgroundCheckpoints?: boolean } = {}): Database {
  const create = options.create ?? true;
  let handle: BetterSqlite3.Database | undefined;
  try {
    if (create && isFileBacked(path)) mkdirSync(dirname(path), { recursive: true });
    handle = new BetterSqlite3(path, { fileMustExist: !create && isFileBacked(path) });
    // The first statements are where a non-SQLite file or a read-only location shows up.
    configure(handle, path, create);
  } catch (error) {
    handle?.close();
    throw unavailable(path, error);
  }
  const raw = handle;
  const checkpoints = options.backgroundCheckpoints && isFileBacked(path) ? startBackgroundCheckpoints(path) : undefined;
  if (checkpoints) raw.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
  const db: Queries = new Kysely<Tables>({
    dialect: new SqliteDialect({ database: withStatementCache(raw) }),
    plugins: [new SafeIntegersPlugin()],
  });
  const code = (error: unknown) => (error instanceof BetterSqlite3.SqliteError ? error.code : "");
  const groupCommit = createGroupCommit(raw, db);

  return {
    dialect: "sqlite",
    location: path,
    db,
    // Kysely's SQLite driver has one connection behind a mutex; a batch holds it for the whole
    // transaction, which keeps this process's other queries out, and IMMEDIATE takes the file's
    // write lock at once, so two processes never both read and then both write.
    transaction: groupCommit.transaction,
    statement: <Row>(text: string) => sqliteStatement<Row>(raw, db, groupCommit.transaction, text),
    // BEGIN IMMEDIATE already excludes every other writer.
    lockForMigration: async () => undefined,
    // better-sqlite3 prepares one statement at a time; exec runs a whole script. The caller holds
    // Kysely's connection mutex (it is inside transaction()), so the handle is not shared meanwhile.
    runScript: async (_trx, script) => void raw.exec(script),
    translate(error) {
      if (UNAVAILABLE.test(code(error))) return unavailable(path, error);
      return error;
    },
    isUniqueViolation: (error) => /^SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY)$/.test(code(error)),
    isForeignKeyViolation: (error) => code(error) === "SQLITE_CONSTRAINT_FOREIGNKEY",
    async ping() {
      try {
        raw.prepare("SELECT 1").get();
      } catch (error) {
        throw unavailable(path, error);
      }
    },
    async close() {
      await checkpoints?.stop();
      await db.destroy();
    },
  };
}

/**
 * better-sqlite3 runs a statement synchronously, so one run never interleaves with another. What
 * must not happen is joining a transaction that another caller holds open across an await: a
 * read of its own then waits for the connection, as Kysely's queries do, and a write of its own
 * joins the next group commit (a one-statement transaction sharing the batch's commit). Inside
 * `transaction` (`q` is its handle) this caller holds the connection already.
 */
function sqliteStatement<Row>(raw: BetterSqlite3.Database, db: Queries, transaction: Database["transaction"], text: string): Statement<Row> {
  let prepared: BetterSqlite3.Statement | undefined;
  // Prepared once, on first use.
  const statement = () => (prepared ??= raw.prepare(text));
  const run = (params: readonly unknown[]): Row[] => {
    if (statement().reader) return safeRows(statement().all(...params) as Row[]);
    statement().run(...params);
    return [];
  };
  return {
    async all(q, params) {
      if (q !== db) return run(params);
      if (!statement().readonly) return transaction(async () => run(params));
      if (raw.inTransaction) return db.connection().execute(async () => run(params));
      return run(params);
    },
  };
}

function unavailable(path: string, error: unknown): StoreError {
  const reason = messageOf(error);
  return new StoreError("database_unavailable", `Cannot use database ${path}: ${reason}`, { cause: error });
}

/** Whether the file is already this service's database (it is about to be refused otherwise). */
function hasMigrationsTable(db: BetterSqlite3.Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
}

function configure(db: BetterSqlite3.Database, path: string, create: boolean): void {
  // First, so that even switching to WAL waits for another process's lock instead of failing.
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // The journal mode is written into the file: another application's file (about to be
  // refused, as it is not this service's) keeps its own.
  if (isFileBacked(path) && (create || hasMigrationsTable(db))) {
    // WAL lets the HTTP server read while a CLI process writes; NORMAL sync is durable
    // across application crashes under WAL and avoids an fsync per transaction.
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
  }
  db.pragma("foreign_keys = ON");
  // Integers come back as BigInt, exactly; SafeIntegersPlugin checks and converts them.
  db.defaultSafeIntegers(true);
}

/**
 * Kysely prepares every query anew; the repositories issue the same few dozen statements over
 * and over, so preparing each once saves most of SQLite's per-query cost.
 */
function withStatementCache(db: BetterSqlite3.Database) {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(text: string) {
      let statement = cache.get(text);
      if (!statement) {
        statement = db.prepare(text);
        if (cache.size < 500) cache.set(text, statement);
      }
      return statement;
    },
    close: () => db.close(),
  };
}
