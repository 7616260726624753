import { CompiledQuery, Kysely, PostgresDialect, sql } from "kysely";
import type { types as PgTypes } from "pg";
import { messageOf } from "../error-message.js";
import { redactUrl } from "../urls.js";
import type { Database, Queries, Statement } from "./database.js";
import { StoreError } from "../record-errors.js";
import { SafeIntegersPlugin } from "./safe-integers.js";
import type { Tables } from "./schema.js";

export interface PostgresOptions {
  url: string;
  /** The schema the tables live in (created if missing); `public` unless given. */
  schema?: string;
  poolSize?: number;
  /** Longest one statement may run on the server. */
  statementTimeoutMs?: number;
  /**
   * Longest a query waits for a connection: a free one from a busy pool, or a new one from a
   * server that does not answer. A server that refuses connections fails at once regardless.
   */
  connectTimeoutMs?: number;
  /** Leave a missing schema missing (the caller refuses it) rather than create it. */
  mustExist?: boolean;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * node-postgres returns BIGINT and NUMERIC (what SUM of BIGINT gives) as strings. Parsed here
 * into BigInt, exactly; SafeIntegersPlugin then checks each fits a number. A NUMERIC with a
 * fraction never belongs in this schema, so it is an error rather than a rounding.
 */
// node-postgres (with its pg-types and the rest) is imported when a pool is opened, not with this
// module: a command that never touches PostgreSQL (`judge --help`, a SQLite server) does not load it.
const exactTypes = (pgTypes: typeof PgTypes) => ({
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8_OID) return (value: string) => BigInt(value);
    if (oid === NUMERIC_OID) {
      return (value: string) => {
        if (!/^-?\d+$/.test(value)) throw new RangeError(`a NUMERIC value ${value} is not a whole number`);
        return BigInt(value);
      };
    }
    return pgTypes.getTypeParser(oid, format as "text");
  },
});

/** SQLSTATE classes and codes that mean "the database cannot serve now". */
const UNAVAILABLE_STATES = /^(08|53|57P0|57014|58)/;
const UNAVAILABLE_SOCKET = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EPIPE|EAI_AGAIN)$/;
const UNAVAILABLE_MESSAGE =
  /timeout exceeded when trying to connect|Connection terminated|connection timeout|Query read timeout|Client has encountered a connection error|the database system is (starting up|shutting down)/i;

export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A pool on the PostgreSQL server at `url`, its connections set to `schema`. */
export async function openPostgres(options: PostgresOptions): Promise<Database> {
  const schema = options.schema ?? "public";
  if (!SCHEMA_NAME.test(schema)) {
    throw new StoreError("invalid_input", `schema name ${JSON.stringify(schema)} must be a plain SQL identifier`);
  }
  const location = redactUrl(options.url);
  const timeout = options.statementTimeoutMs ?? 5_000;
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    statement_timeout: timeout,
    // A server that vanished mid-query never answers; the client gives up shortly after the server would have.
    query_timeout: timeout + 1_000,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 30_000,
    options: `-c search_path=${schema}`,
    types: exactTypes(pg.types),
  });
  // An idle connection that breaks (server restart) is replaced on the next checkout; without a
  // listener its error would crash the process.
  pool.on("error", () => undefined);
  // The pool listens only while a connection is idle: one that breaks while checked out but
  // between queries (handed out just as the server went away) would emit an unheard 'error'
  // and crash the process. Its next query fails instead ("not queryable": a 502), and the pool
  // drops it when it is released.
  pool.on("connect", (client) => client.on("error", () => undefined));
  const db: Queries = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }), plugins: [new SafeIntegersPlugin()] });
  const code = (error: unknown) => String((error as { code?: unknown } | null)?.code ?? "");
  const isUnavailable = (error: unknown) => {
    const c = code(error);
    if (UNAVAILABLE_SOCKET.test(c) || (c.length === 5 && UNAVAILABLE_STATES.test(c))) return true;
    return error instanceof Error && UNAVAILABLE_MESSAGE.test(error.message);
  };
  const translate = (error: unknown) => {
    if (!isUnavailable(error)) return error;
    const reason = messageOf(error);
    return new StoreError("database_unavailable", `Cannot use database ${location}: ${reason || code(error)}`, { cause: error });
  };
  const database: Database = {
    dialect: "postgres",
    location,
    db,
    transaction: (work) => db.transaction().execute(work),
    statement: <Row>(text: string) => postgresStatement<Row>(text),
    // Several instances may start at once; one migrates while the others wait, then find nothing to do.
    lockForMigration: async (trx) => void (await sql`SELECT pg_advisory_xact_lock(7262727)`.execute(trx)),
    // No parameters, so node-postgres uses the simple protocol, which runs several statements.
    runScript: async (trx, script) => void (await sql.raw(script).execute(trx)),
    translate,
    isUniqueViolation: (error) => code(error) === "23505",
    isForeignKeyViolation: (error) => code(error) === "23503",
    async ping() {
      try {
        await sql`SELECT 1`.execute(db);
      } catch (error) {
        throw translate(error);
      }
    },
    close: () => db.destroy(),
  };
  try {
    // Only when missing: PostgreSQL checks the CREATE privilege before IF NOT EXISTS, and a role
    // on a managed database may use its schema without being allowed to create one.
    const found = await sql<{ one: number }>`SELECT 1 AS one FROM pg_namespace WHERE nspname = ${schema}`.execute(db);
    if (found.rows.length === 0 && !options.mustExist) await sql.raw(`CREATE SCHEMA IF NOT EXISTS "${schema}"`).execute(db);
  } catch (error) {
    // Another instance created it at the same moment (IF NOT EXISTS does not serialise that).
    if (["23505", "42P06"].includes(code(error))) return database;
    await database.close();
    const translated = translate(error);
    if (translated instanceof StoreError) throw translated;
    throw new StoreError("database_unavailable", `Cannot use database ${location}: ${String(error)}`, { cause: error });
  }
  return database;
}

/** Numbered placeholders, run through Kysely on the handle given (the pool, or a transaction's connection). */
function postgresStatement<Row>(text: string): Statement<Row> {
  let n = 0;
  const numbered = text.replace(/\?/g, () => `$${++n}`);
  return { all: async (q, params) => (await q.executeQuery<Row>(CompiledQuery.raw(numbered, [...params]))).rows };
}
