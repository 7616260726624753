import { MAX_MICROS } from "../billing/money.js";
import { periodContaining } from "../billing/periods.js";
import type { Database } from "./db.js";
import { StoreError } from "./errors.js";
import type { LedgerCheck, LedgerEntry, LedgerRepository } from "./types.js";

interface EntryRow {
  id: number;
  account_id: string;
  at: number;
  kind: LedgerEntry["kind"];
  amount_micro: number;
  questions: number;
  input_tokens: number;
  period_start: number | null;
  request_id: string | null;
  note: string | null;
}

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
});

export const MAX_LEDGER_PAGE = 500;

export function createLedgerRepository(db: Database, now: () => number): LedgerRepository {
  const s = prepareStatements(db);

  const topUp = db.transaction((accountId: string, amountMicro: number, note: string | null) => {
    if (s.credit.run({ account: accountId, amount: amountMicro, max: MAX_MICROS }).changes === 0) {
      if (!s.exists.get(accountId)) throw new StoreError("account_not_found", `No account with id ${accountId}`);
      throw new StoreError("invalid_input", "the balance would exceed the largest amount the service keeps");
    }
    const id = Number(s.insertTopUp.run(accountId, now(), amountMicro, note).lastInsertRowid);
    return { entry: toEntry(s.entry.get(id)!), balanceMicro: s.balance.get(accountId)! };
  });

  return {
    topUp(accountId, amountMicro, note) {
      if (!Number.isSafeInteger(amountMicro) || amountMicro <= 0) {
        throw new StoreError("invalid_input", "a top-up must be a positive whole number of micro-euros");
      }
      if (note !== undefined && note.length > 500) throw new StoreError("invalid_input", "a note is at most 500 characters");
      return topUp.immediate(accountId, amountMicro, note ?? null);
    },
    entries(accountId, options = {}) {
      const limit = Math.min(Math.max(1, Math.trunc(options.limit ?? 50)), MAX_LEDGER_PAGE);
      return s.entries.all(accountId, limit).map(toEntry);
    },
    usage(accountId) {
      const account = s.account.get(accountId);
      if (!account) return undefined;
      const period = periodContaining(account.created_at, now());
      const usage = s.usage.get(accountId, period.start);
      return {
        accountId,
        period,
        used: usage?.used ?? 0,
        reserved: usage?.reserved ?? 0,
        allowance: account.allowance_questions,
        balanceMicro: account.balance_micro,
        reservedMicro: account.reserved_micro,
      };
    },
    check: () => checkLedger(s),
  };
}

/** Every balance, hold and period usage recomputed from the ledger and the open reservations. */
function checkLedger(s: ReturnType<typeof prepareStatements>): LedgerCheck {
  const mismatches: LedgerCheck["mismatches"] = [];
  const accounts = s.balances.all();
  for (const row of accounts) {
    if (row.balance_micro !== row.ledger_sum) {
      mismatches.push({ accountId: row.id, what: "balance", unit: "micro_eur", column: row.balance_micro, ledgerSum: row.ledger_sum });
    }
    if (row.reserved_micro !== row.held) {
      mismatches.push({ accountId: row.id, what: "reserved balance", unit: "micro_eur", column: row.reserved_micro, ledgerSum: row.held });
    }
  }
  for (const row of s.periods.all()) {
    const what = `period ${new Date(row.period_start).toISOString()}`;
    if (row.used !== row.ledger_sum) {
      mismatches.push({ accountId: row.account_id, what: `${what} used`, unit: "questions", column: row.used, ledgerSum: row.ledger_sum });
    }
    if (row.reserved !== row.held) {
      mismatches.push({ accountId: row.account_id, what: `${what} reserved`, unit: "questions", column: row.reserved, ledgerSum: row.held });
    }
  }
  return { ok: mismatches.length === 0, accounts: accounts.length, mismatches };
}

function prepareStatements(db: Database) {
  return {
    exists: db.prepare<[string], 1>("SELECT 1 FROM accounts WHERE id = ?").pluck(),
    balance: db.prepare<[string], number>("SELECT balance_micro FROM accounts WHERE id = ?").pluck(),
    credit: db.prepare(
      "UPDATE accounts SET balance_micro = balance_micro + @amount WHERE id = @account AND balance_micro <= @max - @amount",
    ),
    insertTopUp: db.prepare(
      "INSERT INTO ledger (account_id, at, kind, amount_micro, note) VALUES (?, ?, 'top_up', ?, ?)",
    ),
    entry: db.prepare<[number], EntryRow>("SELECT * FROM ledger WHERE id = ?"),
    entries: db.prepare<[string, number], EntryRow>("SELECT * FROM ledger WHERE account_id = ? ORDER BY id DESC LIMIT ?"),
    account: db.prepare<
      [string],
      { created_at: number; balance_micro: number; reserved_micro: number; allowance_questions: number }
    >(
      `SELECT a.created_at, a.balance_micro, a.reserved_micro, p.allowance_questions
       FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = ?`,
    ),
    usage: db.prepare<[string, number], { used: number; reserved: number }>(
      "SELECT used, reserved FROM plan_usage WHERE account_id = ? AND period_start = ?",
    ),
    balances: db.prepare<
      [],
      { id: string; balance_micro: number; reserved_micro: number; ledger_sum: number; held: number }
    >(
      `SELECT a.id, a.balance_micro, a.reserved_micro,
         (SELECT COALESCE(SUM(amount_micro), 0) FROM ledger l WHERE l.account_id = a.id) AS ledger_sum,
         (SELECT COALESCE(SUM(amount_micro), 0) FROM reservations r
            WHERE r.account_id = a.id AND r.billed_to = 'balance') AS held
       FROM accounts a ORDER BY a.id`,
    ),
    // Every period any record mentions: a usage row, a plan entry or a plan hold, so a usage
    // row that went missing is caught too.
    periods: db.prepare<
      [],
      { account_id: string; period_start: number; used: number; reserved: number; ledger_sum: number; held: number }
    >(
      `WITH periods AS (
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
       ORDER BY p.account_id, p.period_start`,
    ),
  };
}
