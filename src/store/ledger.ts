import { MAX_LEDGER_PAGE } from "../record-limits.js";
import { sql } from "kysely";
import type { Database, Queries } from "./database.js";
import { dayBuckets } from "./day-buckets.js";
import { StoreError } from "../record-errors.js";
import { recordAdminAction } from "./audit.js";
import { checkKeys } from "./keys-check.js";
import { usageByModel } from "./ledger-by-model.js";
import type { AdminActor } from "./audit-types.js";
import type { DailyUsage, LedgerActivity, LedgerCheck, LedgerEntry, LedgerRepository } from "./ledger-types.js";
import type { RowOf } from "./schema.js";

/** The largest balance kept: the largest integer a JavaScript number holds exactly. */
export const MAX_BALANCE_MICRO = Number.MAX_SAFE_INTEGER;

/** `model` is absent where a query does not read it. */
type EntryRow = Omit<RowOf<"ledger">, "model"> & { model?: string | null };

const toEntry = (row: EntryRow): LedgerEntry => ({
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
  keyId: row.key_id ?? null,
  ...(row.model != null && { model: row.model }),
});

export { MAX_LEDGER_PAGE };

export function createLedgerRepository(database: Database, now: () => number): LedgerRepository {
  const { db } = database;

  /** The admin's money change, recorded with its ledger entry in the same transaction. */
  const record = (trx: Queries, by: AdminActor | undefined, entry: LedgerEntry, balanceMicro: number) =>
    by &&
    recordAdminAction(trx, {
      by,
      at: entry.at,
      action: entry.kind === "top_up" ? "balance.top_up" : "balance.adjust",
      object: { kind: "account", id: entry.accountId },
      accountId: entry.accountId,
      details: { ledger_entry: entry.id, amount_micro: entry.amountMicro, balance_micro: balanceMicro, note: entry.note },
    });

  const topUp = (accountId: string, amountMicro: number, note: string | null, by?: AdminActor) =>
    database.transaction(async (trx) => {
      const credited = await trx
        .updateTable("accounts")
        .set({ balance_micro: sql`balance_micro + ${amountMicro}` })
        .where("id", "=", accountId)
        .where("balance_micro", "<=", MAX_BALANCE_MICRO - amountMicro)
        .executeTakeFirst();
      if (credited.numUpdatedRows === 0n) {
        const exists = await trx.selectFrom("accounts").select("id").where("id", "=", accountId).executeTakeFirst();
        if (!exists) throw new StoreError("account_not_found", `No account with id ${accountId}`);
        throw new StoreError("invalid_input", "the balance would exceed the largest amount the service keeps");
      }
      const entry = await trx
        .insertInto("ledger")
        .values({ account_id: accountId, at: now(), kind: "top_up", amount_micro: amountMicro, note })
        .returningAll()
        .executeTakeFirstOrThrow();
      const { balance_micro } = await trx.selectFrom("accounts").select("balance_micro").where("id", "=", accountId).executeTakeFirstOrThrow();
      await record(trx, by, toEntry(entry as EntryRow), balance_micro);
      return { entry: toEntry(entry as EntryRow), balanceMicro: balance_micro };
    });

  /**
   * A correction as its own ledger entry (kind "adjustment"), so history is never rewritten: one
   * conditional UPDATE, so a negative one never takes the balance below what requests in flight
   * hold (nor below zero), however many run at once, and a positive one never past the maximum.
   */
  const adjust = (accountId: string, amountMicro: number, note: string, by?: AdminActor) =>
    database.transaction(async (trx) => {
      const changed = await trx
        .updateTable("accounts")
        .set({ balance_micro: sql`balance_micro + ${amountMicro}` })
        .where("id", "=", accountId)
        .where(sql<boolean>`balance_micro + ${amountMicro} >= reserved_micro`)
        .where("balance_micro", "<=", MAX_BALANCE_MICRO - Math.max(0, amountMicro))
        .returning(["balance_micro", "reserved_micro"])
        .executeTakeFirst();
      if (!changed) {
        const account = await trx.selectFrom("accounts").select(["balance_micro", "reserved_micro"]).where("id", "=", accountId).executeTakeFirst();
        if (!account) throw new StoreError("account_not_found", `No account with id ${accountId}`);
        if (amountMicro > 0) throw new StoreError("invalid_input", "the balance would exceed the largest amount the service keeps");
        throw new StoreError(
          "invalid_input",
          `an adjustment of ${-amountMicro} µ€ would take the balance below zero: it is ${account.balance_micro} µ€` +
            (account.reserved_micro > 0 ? `, of which ${account.reserved_micro} µ€ is held by requests in flight` : ""),
        );
      }
      const entry = await trx
        .insertInto("ledger")
        .values({ account_id: accountId, at: now(), kind: "adjustment", amount_micro: amountMicro, note })
        .returningAll()
        .executeTakeFirstOrThrow();
      await record(trx, by, toEntry(entry as EntryRow), changed.balance_micro);
      return { entry: toEntry(entry as EntryRow), balanceMicro: changed.balance_micro };
    });

  return {
    async adjust(accountId, amountMicro, note, by) {
      if (!Number.isSafeInteger(amountMicro) || amountMicro === 0) {
        throw new StoreError("invalid_input", "an adjustment must be a non-zero whole number of micro-euros");
      }
      if (note.trim() === "" || note.length > 500) throw new StoreError("invalid_input", "an adjustment needs a note (why), at most 500 characters");
      return adjust(accountId, amountMicro, note, by);
    },
    async topUp(accountId, amountMicro, note, by) {
      if (!Number.isSafeInteger(amountMicro) || amountMicro <= 0) {
        throw new StoreError("invalid_input", "a top-up must be a positive whole number of micro-euros");
      }
      if (note !== undefined && note.length > 500) throw new StoreError("invalid_input", "a note is at most 500 characters");
      return topUp(accountId, amountMicro, note ?? null, by);
    },
    entries: async (accountId, options = {}) => (await newestFirst(db, accountId, pageSize(options.limit), options.before)).map(toEntry),
    async entryPage(accountId, options) {
      const limit = pageSize(options.limit);
      // One more than asked: whether an older page exists, without a count.
      const rows = await newestFirst(db, accountId, limit + 1, options.before);
      const entries = rows.slice(0, limit).map(toEntry);
      return { entries, nextBefore: rows.length > limit ? entries[limit - 1].id : null };
    },
    usageByDay: (accountId, range) => usageByDay(db, accountId, range),
    usageByModel: (accountId, range) => usageByModel(db, accountId, range),
    activity: (range) => activity(db, range),
    async usage(accountId, period) {
      const row = await db
        .selectFrom("accounts as a")
        .innerJoin("plans as p", "p.id", "a.plan_id")
        .leftJoin("plan_usage as u", (join) => join.onRef("u.account_id", "=", "a.id").on("u.period_start", "=", period.start))
        .select(["a.balance_micro", "a.reserved_micro", "p.allowance_questions", "u.used", "u.reserved"])
        .where("a.id", "=", accountId)
        .executeTakeFirst();
      if (!row) return undefined;
      return {
        accountId,
        period,
        used: row.used ?? 0,
        reserved: row.reserved ?? 0,
        allowance: row.allowance_questions,
        balanceMicro: row.balance_micro,
        reservedMicro: row.reserved_micro,
      };
    },
    check: () => checkLedger(db),
  };
}

const pageSize = (limit = 50) => Math.min(Math.max(1, Math.trunc(limit)), MAX_LEDGER_PAGE);

/** `limit` entries of the account, newest first, older than the entry `before` when given. */
async function newestFirst(db: Queries, accountId: string, limit: number, before?: number): Promise<EntryRow[]> {
  let query = db.selectFrom("ledger").selectAll().where("account_id", "=", accountId);
  if (before !== undefined) query = query.where("id", "<", before);
  return (await query.orderBy("id", "desc").limit(limit).execute()) as EntryRow[];
}

/** Judgments settle as one entry each: on the plan allowance, or charged to the balance. */
const JUDGMENT_KINDS = ["plan", "charge"] as const;

async function usageByDay(db: Queries, accountId: string, range: { start: number; end: number }): Promise<DailyUsage[]> {
  const { day, dayStart } = dayBuckets(range.start);
  const rows = await db
    .selectFrom("ledger")
    .select((eb) => [
      day.as("day"),
      eb.fn.countAll<number>().as("requests"),
      eb.fn.sum<number>("questions").as("questions"),
      eb.fn.sum<number>("input_tokens").as("input_tokens"),
      sql<number>`SUM(CASE WHEN kind = 'charge' THEN -amount_micro ELSE 0 END)`.as("charged_micro"),
    ])
    .where("account_id", "=", accountId)
    .where("kind", "in", JUDGMENT_KINDS)
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
    chargedMicro: row.charged_micro,
  }));
}

async function activity(db: Queries, range: { start: number; end: number }): Promise<LedgerActivity> {
  const judgment = sql`kind IN ('plan', 'charge')`;
  const row = await db
    .selectFrom("ledger")
    .select([
      sql<number | null>`SUM(CASE WHEN ${judgment} THEN 1 ELSE 0 END)`.as("requests"),
      sql<number | null>`SUM(CASE WHEN ${judgment} THEN questions ELSE 0 END)`.as("questions"),
      sql<number | null>`SUM(CASE WHEN ${judgment} THEN input_tokens ELSE 0 END)`.as("input_tokens"),
      // Each balance is at most 2^53 − 1 µ€, a sum across accounts is not: whole euros and the
      // µ€ below them are summed apart (each exact as a number for billions of entries), then joined.
      sql<number | null>`SUM(CASE WHEN kind = 'charge' THEN (-amount_micro) / 1000000 ELSE 0 END)`.as("charged_euros"),
      sql<number | null>`SUM(CASE WHEN kind = 'charge' THEN (-amount_micro) % 1000000 ELSE 0 END)`.as("charged_rest"),
      sql<number | null>`SUM(CASE WHEN kind = 'top_up' THEN amount_micro / 1000000 ELSE 0 END)`.as("topped_up_euros"),
      sql<number | null>`SUM(CASE WHEN kind = 'top_up' THEN amount_micro % 1000000 ELSE 0 END)`.as("topped_up_rest"),
    ])
    .where("at", ">=", range.start)
    .where("at", "<", range.end)
    .executeTakeFirstOrThrow();
  // SUM over no rows is NULL.
  return {
    requests: row.requests ?? 0,
    questions: row.questions ?? 0,
    inputTokens: row.input_tokens ?? 0,
    chargedMicro: joinMicro(row.charged_euros, row.charged_rest),
    toppedUpMicro: joinMicro(row.topped_up_euros, row.topped_up_rest),
  };
}

/** Every balance, hold and period usage recomputed from the ledger and the open reservations. */
async function checkLedger(db: Queries): Promise<LedgerCheck> {
  const mismatches: LedgerCheck["mismatches"] = [];
  const accounts = await db
    .selectFrom("accounts as a")
    .select((eb) => [
      "a.id",
      "a.balance_micro",
      "a.reserved_micro",
      eb.fn
        .coalesce(
          eb
            .selectFrom("ledger as l")
            .select((e) => e.fn.sum<number>("l.amount_micro").as("s"))
            .whereRef("l.account_id", "=", "a.id"),
          eb.lit(0),
        )
        .as("ledger_sum"),
      eb.fn
        .coalesce(
          eb
            .selectFrom("reservations as r")
            .select((e) => e.fn.sum<number>("r.amount_micro").as("s"))
            .whereRef("r.account_id", "=", "a.id")
            .where("r.billed_to", "=", "balance"),
          eb.lit(0),
        )
        .as("held"),
    ])
    .orderBy("a.id")
    .execute();
  for (const row of accounts) {
    if (row.balance_micro !== row.ledger_sum) {
      mismatches.push({ accountId: row.id, what: "balance", unit: "micro_eur", column: row.balance_micro, ledgerSum: row.ledger_sum });
    }
    if (row.reserved_micro !== row.held) {
      mismatches.push({ accountId: row.id, what: "reserved balance", unit: "micro_eur", column: row.reserved_micro, ledgerSum: row.held });
    }
  }
  for (const row of await periodsInLedger(db)) {
    const what = `period ${new Date(row.period_start).toISOString()}`;
    if (row.used !== row.ledger_sum) {
      mismatches.push({ accountId: row.account_id, what: `${what} used`, unit: "questions", column: row.used, ledgerSum: row.ledger_sum });
    }
    if (row.reserved !== row.held) {
      mismatches.push({ accountId: row.account_id, what: `${what} reserved`, unit: "questions", column: row.reserved, ledgerSum: row.held });
    }
  }
  mismatches.push(...(await checkKeys(db)));
  return { ok: mismatches.length === 0, accounts: accounts.length, mismatches };
}

/**
 * Every period any record mentions: a usage row, a plan entry or a plan hold, so a usage row
 * that went missing is caught too.
 */
async function periodsInLedger(db: Queries) {
  const result = await sql<{ account_id: string; period_start: number; used: number; reserved: number; ledger_sum: number; held: number }>`
    WITH periods AS (
      SELECT account_id, period_start FROM plan_usage
      UNION SELECT account_id, period_start FROM ledger WHERE kind = 'plan'
      UNION SELECT account_id, period_start FROM reservations WHERE billed_to = 'plan')
    SELECT p.account_id, p.period_start,
      COALESCE(u.used, 0) AS used, COALESCE(u.reserved, 0) AS reserved,
      (SELECT COALESCE(SUM(questions), 0) FROM ledger l
         WHERE l.account_id = p.account_id AND l.kind = 'plan' AND l.period_start = p.period_start) AS ledger_sum,
      (SELECT COALESCE(SUM(questions), 0) FROM reservations r
         WHERE r.account_id = p.account_id AND r.billed_to = 'plan' AND r.period_start = p.period_start) AS held
    FROM periods p
    LEFT JOIN plan_usage u ON u.account_id = p.account_id AND u.period_start = p.period_start
    ORDER BY p.account_id, p.period_start`.execute(db);
  return result.rows;
}

/** Whole euros and the µ€ below them, summed apart, as one exact sum. */
const joinMicro = (euros: number | null, rest: number | null): bigint => BigInt(euros ?? 0) * 1_000_000n + BigInt(rest ?? 0);
