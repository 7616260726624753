import { sql } from "kysely";
import type { Database, Queries } from "./database.js";
import { DAY_MS } from "../money/periods.js";
import { dayBuckets } from "./day-buckets.js";
import { MAX_LEDGER_PAGE } from "../record-limits.js";
import type { AccountDay, BusyAccount, DayActivity, KeyedLedgerEntry, ReportsRepository } from "./reports-types.js";

export type * from "./reports-types.js";

/**
 * What the console reports across accounts and instances: the ledger by UTC day, the busiest
 * accounts, the server errors the edge recorded, and ledger rows with their key (for lists and
 * CSV). Read-only but for the server errors, which the edge writes one row per 5xx.
 */

/** Server errors older than this are pruned as new ones are recorded: the console shows 30 days. */
export const SERVER_ERROR_RETENTION_MS = 31 * DAY_MS;

export { LEDGER_KINDS } from "../record-limits.js";

export function createReportsRepository(database: Database, now: () => number): ReportsRepository {
  const { db } = database;
  return {
    activityByDay: (range) => activityByDay(db, range),
    busiestAccounts: (range, by, limit) => busiestAccounts(db, range, by, limit),
    usageByAccountDay: (range, accountId) => usageByAccountDay(db, range, accountId),
    async recordServerError(error) {
      const at = now();
      await db
        .insertInto("server_errors")
        .values({ at, method: error.method, route: error.route.slice(0, 200), status: error.status, code: error.code, request_id: error.requestId })
        .execute();
      await db
        .deleteFrom("server_errors")
        .where("at", "<", at - SERVER_ERROR_RETENTION_MS)
        .execute();
    },
    async recentServerErrors(limit) {
      const rows = await db.selectFrom("server_errors").selectAll().orderBy("id", "desc").limit(limit).execute();
      return rows.map((row) => ({
        id: row.id,
        at: row.at,
        method: row.method,
        route: row.route,
        status: row.status,
        code: row.code,
        requestId: row.request_id,
      }));
    },
    async serverErrorsByDay(range) {
      const { day, dayStart } = dayBuckets(range.start);
      const rows = await db
        .selectFrom("server_errors")
        .select((eb) => [day.as("day"), eb.fn.countAll<number>().as("errors")])
        .where("at", ">=", range.start)
        .where("at", "<", range.end)
        .groupBy(sql`1`)
        .orderBy(sql`1`)
        .execute();
      return rows.map((row) => ({ day: dayStart(row.day), errors: row.errors }));
    },
    async ledgerPage(accountId, filter) {
      const limit = Math.min(Math.max(1, Math.trunc(filter.limit)), MAX_LEDGER_PAGE);
      let query = db
        .selectFrom("ledger as l")
        .leftJoin("api_keys as k", "k.id", "l.key_id")
        .selectAll("l")
        .select(["k.prefix as key_prefix", "k.name as key_name"])
        .where("l.account_id", "=", accountId);
      if (filter.kinds && filter.kinds.length > 0) query = query.where("l.kind", "in", filter.kinds);
      if (filter.before !== undefined) query = query.where("l.id", "<", filter.before);
      // One more than asked: whether an older page exists, without a count.
      const rows = await query
        .orderBy("l.id", "desc")
        .limit(limit + 1)
        .execute();
      const entries = rows.slice(0, limit).map(
        (row): KeyedLedgerEntry => ({
          id: row.id,
          accountId: row.account_id,
          at: row.at,
          kind: row.kind,
          amountMicro: row.amount_micro,
          questions: row.questions,
          inputTokens: row.input_tokens,
          periodStart: row.period_start,
          requestId: row.request_id,
          note: row.note,
          keyId: row.key_id,
          key: row.key_id && row.key_prefix ? { id: row.key_id, prefix: row.key_prefix, name: row.key_name ?? null } : null,
        }),
      );
      return { entries, nextBefore: rows.length > limit ? entries[limit - 1].id : null };
    },
  };
}

const judgment = sql<boolean>`kind IN ('plan', 'charge')`;

async function activityByDay(db: Queries, range: { start: number; end: number }): Promise<DayActivity[]> {
  const { day, dayStart } = dayBuckets(range.start);
  const rows = await db
    .selectFrom("ledger")
    .select([
      day.as("day"),
      sql<number>`SUM(CASE WHEN ${judgment} THEN 1 ELSE 0 END)`.as("requests"),
      sql<number>`SUM(CASE WHEN ${judgment} THEN questions ELSE 0 END)`.as("questions"),
      sql<number>`SUM(CASE WHEN ${judgment} THEN input_tokens ELSE 0 END)`.as("input_tokens"),
      // Whole euros and the µ€ below them summed apart (each exact as a number), as ledger.activity does.
      sql<number>`SUM(CASE WHEN kind = 'charge' THEN (-amount_micro) / 1000000 ELSE 0 END)`.as("charged_euros"),
      sql<number>`SUM(CASE WHEN kind = 'charge' THEN (-amount_micro) % 1000000 ELSE 0 END)`.as("charged_rest"),
      sql<number>`SUM(CASE WHEN kind = 'top_up' THEN amount_micro / 1000000 ELSE 0 END)`.as("topped_up_euros"),
      sql<number>`SUM(CASE WHEN kind = 'top_up' THEN amount_micro % 1000000 ELSE 0 END)`.as("topped_up_rest"),
    ])
    .where("at", ">=", range.start)
    .where("at", "<", range.end)
    // By position: PostgreSQL would not see two parameterised copies of the expression as one.
    .groupBy(sql`1`)
    .orderBy(sql`1`)
    .execute();
  return rows.map((row) => ({
    day: dayStart(row.day),
    requests: row.requests,
    questions: row.questions,
    inputTokens: row.input_tokens,
    chargedMicro: joinMicro(row.charged_euros, row.charged_rest),
    toppedUpMicro: joinMicro(row.topped_up_euros, row.topped_up_rest),
  }));
}

async function busiestAccounts(db: Queries, range: { start: number; end: number }, by: "charged" | "requests", limit: number): Promise<BusyAccount[]> {
  const charged = sql`SUM(CASE WHEN l.kind = 'charge' THEN -l.amount_micro ELSE 0 END)`;
  const requests = sql`COUNT(*)`;
  const order = by === "charged" ? [charged, requests] : [requests, charged];
  const rows = await db
    .selectFrom("ledger as l")
    .innerJoin("accounts as a", "a.id", "l.account_id")
    .select([
      "l.account_id",
      "a.name",
      sql<number>`COUNT(*)`.as("requests"),
      sql<number>`SUM(l.questions)`.as("questions"),
      sql<number>`SUM(CASE WHEN l.kind = 'charge' THEN (-l.amount_micro) / 1000000 ELSE 0 END)`.as("charged_euros"),
      sql<number>`SUM(CASE WHEN l.kind = 'charge' THEN (-l.amount_micro) % 1000000 ELSE 0 END)`.as("charged_rest"),
    ])
    .where(sql<boolean>`l.kind IN ('plan', 'charge')`)
    .where("l.at", ">=", range.start)
    .where("l.at", "<", range.end)
    .groupBy(["l.account_id", "a.name"])
    // Ordered by the plain sums (exact on PostgreSQL, 64-bit on SQLite), never returned: only the split sums are read.
    .orderBy(sql`${order[0]} DESC, ${order[1]} DESC, l.account_id`)
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    accountId: row.account_id,
    name: row.name,
    requests: row.requests,
    questions: row.questions,
    chargedMicro: joinMicro(row.charged_euros, row.charged_rest),
  }));
}

async function usageByAccountDay(db: Queries, range: { start: number; end: number }, accountId?: string): Promise<AccountDay[]> {
  const { day, dayStart } = dayBuckets(range.start, "l.at");
  let query = db
    .selectFrom("ledger as l")
    .innerJoin("accounts as a", "a.id", "l.account_id")
    .select([
      day.as("day"),
      "l.account_id",
      "a.name",
      sql<number>`COUNT(*)`.as("requests"),
      sql<number>`SUM(l.questions)`.as("questions"),
      sql<number>`SUM(l.input_tokens)`.as("input_tokens"),
      sql<number>`SUM(CASE WHEN l.kind = 'charge' THEN (-l.amount_micro) / 1000000 ELSE 0 END)`.as("charged_euros"),
      sql<number>`SUM(CASE WHEN l.kind = 'charge' THEN (-l.amount_micro) % 1000000 ELSE 0 END)`.as("charged_rest"),
    ])
    .where(sql<boolean>`l.kind IN ('plan', 'charge')`)
    .where("l.at", ">=", range.start)
    .where("l.at", "<", range.end);
  if (accountId !== undefined) query = query.where("l.account_id", "=", accountId);
  const rows = await query.groupBy([sql`1`, "l.account_id", "a.name"]).orderBy(sql`1`).orderBy("l.account_id").execute();
  return rows.map((row) => ({
    day: dayStart(row.day),
    accountId: row.account_id,
    name: row.name,
    requests: row.requests,
    questions: row.questions,
    inputTokens: row.input_tokens,
    chargedMicro: joinMicro(row.charged_euros, row.charged_rest),
  }));
}

const joinMicro = (euros: number | null, rest: number | null): bigint => BigInt(euros ?? 0) * 1_000_000n + BigInt(rest ?? 0);
