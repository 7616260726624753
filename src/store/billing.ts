import { chargeFor } from "../billing/money.js";
import { periodContaining } from "../billing/periods.js";
import type { Database } from "./db.js";
import { newId } from "./random.js";
import type { BillingRepository, BilledTo, Reservation, ReserveOutcome, Standing } from "./types.js";

/** How long a completed request's response is replayed for its Idempotency-Key. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

interface ReservationRow {
  id: string;
  account_id: string;
  billed_to: BilledTo;
  questions: number;
  input_tokens: number;
  amount_micro: number;
  period_start: number;
  request_id: string;
  expires_at: number;
}

const toReservation = (row: ReservationRow): Reservation => ({
  id: row.id,
  accountId: row.account_id,
  billedTo: row.billed_to,
  questions: row.questions,
  inputTokens: row.input_tokens,
  amountMicro: row.amount_micro,
  periodStart: row.period_start,
  requestId: row.request_id,
  expiresAt: row.expires_at,
});

/** Thrown inside a transaction to roll it back when nothing can pay. */
class NothingCanPay extends Error {}

/**
 * Moving a hold must touch exactly the row the hold was taken on; anything else means the
 * records were altered behind the service's back, and the transaction is rolled back rather
 * than writing a ledger entry that no balance or usage reflects.
 */
function exactlyOne(result: { changes: number }, what: string): void {
  if (result.changes !== 1) throw new Error(`billing records are inconsistent: ${what} changed ${result.changes} rows`);
}

/**
 * Reserve, settle and release. Every debit is one conditional UPDATE ("only if enough
 * remains"), so concurrent requests, and other processes on the same file, can never
 * overdraw; the model runs between these short transactions, never inside one.
 */
export function createBillingRepository(db: Database, now: () => number, reservationTtlMs: number): BillingRepository {
  const s = prepareStatements(db);

  const standing = (accountId: string, at: number): Standing | undefined => {
    const account = s.accountWithPlan.get(accountId);
    if (!account) return undefined;
    const period = periodContaining(account.created_at, at);
    const usage = s.usage.get(accountId, period.start);
    return {
      planUsed: (usage?.used ?? 0) + (usage?.reserved ?? 0),
      allowance: account.allowance_questions,
      balanceMicro: account.balance_micro,
      heldMicro: account.reserved_micro,
    };
  };

  const reserveInTransaction = db.transaction((input: Parameters<BillingRepository["reserve"]>[0]): ReserveOutcome => {
    const at = now();
    const account = s.accountWithPlan.get(input.accountId);
    if (!account) return { ok: false, reason: "account_not_found" };
    const periodStart = periodContaining(account.created_at, at).start;
    s.ensureUsage.run(input.accountId, periodStart);
    const hold = { account: input.accountId, period: periodStart, questions: input.questions };
    let billedTo: BilledTo = "plan";
    let amount = 0;
    if (s.holdAllowance.run(hold).changes === 0) {
      billedTo = "balance";
      amount = chargeFor(input.inputTokens, account.price_per_million);
      if (s.holdBalance.run({ account: input.accountId, amount }).changes === 0) throw new NothingCanPay();
    }
    const row: ReservationRow = {
      id: newId("res"),
      account_id: input.accountId,
      billed_to: billedTo,
      questions: input.questions,
      input_tokens: input.inputTokens,
      amount_micro: amount,
      period_start: periodStart,
      request_id: input.requestId,
      expires_at: at + reservationTtlMs,
    };
    s.insertReservation.run({ ...row, created_at: at });
    return { ok: true, reservation: toReservation(row), standing: standing(input.accountId, at)! };
  });

  const releaseInTransaction = db.transaction((reservationId: string): boolean => {
    const row = s.takeReservation.get(reservationId);
    if (!row) return false;
    if (row.billed_to === "plan") exactlyOne(s.unholdAllowance.run(row.questions, row.account_id, row.period_start), "release");
    else exactlyOne(s.unholdBalance.run(row.amount_micro, row.account_id), "release");
    return true;
  });

  const settleInTransaction = db.transaction((reservation: Reservation, idempotency?: { key: string; body: string }) => {
    const row = s.takeReservation.get(reservation.id);
    if (!row) return undefined;
    const at = now();
    if (row.billed_to === "plan") {
      exactlyOne(s.settleAllowance.run({ q: row.questions, account: row.account_id, period: row.period_start }), "settle");
    } else {
      exactlyOne(s.settleBalance.run({ amount: row.amount_micro, account: row.account_id }), "settle");
    }
    s.insertEntry.run({
      account_id: row.account_id,
      at,
      kind: row.billed_to === "plan" ? "plan" : "charge",
      amount_micro: -row.amount_micro,
      questions: row.questions,
      input_tokens: row.input_tokens,
      period_start: row.billed_to === "plan" ? row.period_start : null,
      request_id: row.request_id,
    });
    const result = { billedTo: row.billed_to, standing: standing(row.account_id, at)! };
    if (idempotency) {
      const response = JSON.stringify({ body: idempotency.body, ...result });
      s.completeIdempotency.run(response, at + IDEMPOTENCY_RETENTION_MS, row.account_id, idempotency.key, row.request_id);
    }
    return result;
  });

  return {
    reserve(input) {
      try {
        return reserveInTransaction.immediate(input);
      } catch (error) {
        if (!(error instanceof NothingCanPay)) throw error;
        const account = s.accountWithPlan.get(input.accountId)!;
        return {
          ok: false,
          reason: "insufficient_funds",
          standing: standing(input.accountId, now())!,
          chargeMicro: chargeFor(input.inputTokens, account.price_per_million),
        };
      }
    },
    settle: (reservation, idempotency) => settleInTransaction.immediate(reservation, idempotency),
    release: (reservationId) => releaseInTransaction.immediate(reservationId),
    sweep() {
      const at = now();
      const expired = s.expiredReservations.all(at);
      const reservations = expired.filter((id) => releaseInTransaction.immediate(id)).length;
      const idempotencyKeys = s.forgetIdempotency.run(at).changes;
      // A window is over a minute after it starts; keep one spare minute for clock skew.
      const rateWindows = s.forgetRateWindows.run(at - 120_000).changes;
      return { reservations, idempotencyKeys, rateWindows };
    },
    standing: (accountId) => standing(accountId, now()),
  };
}

function prepareStatements(db: Database) {
  return {
    accountWithPlan: db.prepare<
      [string],
      { created_at: number; balance_micro: number; reserved_micro: number; allowance_questions: number; price_per_million: number }
    >(
      `SELECT a.created_at, a.balance_micro, a.reserved_micro, p.allowance_questions, p.price_per_million
       FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = ?`,
    ),
    usage: db.prepare<[string, number], { used: number; reserved: number }>(
      "SELECT used, reserved FROM plan_usage WHERE account_id = ? AND period_start = ?",
    ),
    ensureUsage: db.prepare("INSERT OR IGNORE INTO plan_usage (account_id, period_start) VALUES (?, ?)"),
    // The allowance is read in the same statement as the debit, so a plan change cannot slip between them.
    holdAllowance: db.prepare(
      `UPDATE plan_usage SET reserved = reserved + @questions
       WHERE account_id = @account AND period_start = @period
         AND used + reserved + @questions <= (SELECT p.allowance_questions FROM accounts a
                                              JOIN plans p ON p.id = a.plan_id WHERE a.id = @account)`,
    ),
    holdBalance: db.prepare(
      `UPDATE accounts SET reserved_micro = reserved_micro + @amount
       WHERE id = @account AND balance_micro - reserved_micro >= @amount`,
    ),
    unholdAllowance: db.prepare(
      "UPDATE plan_usage SET reserved = reserved - ? WHERE account_id = ? AND period_start = ?",
    ),
    unholdBalance: db.prepare("UPDATE accounts SET reserved_micro = reserved_micro - ? WHERE id = ?"),
    settleAllowance: db.prepare(
      "UPDATE plan_usage SET reserved = reserved - @q, used = used + @q WHERE account_id = @account AND period_start = @period",
    ),
    settleBalance: db.prepare(
      "UPDATE accounts SET reserved_micro = reserved_micro - @amount, balance_micro = balance_micro - @amount WHERE id = @account",
    ),
    insertReservation: db.prepare(
      `INSERT INTO reservations (id, account_id, billed_to, questions, input_tokens, amount_micro, period_start,
         request_id, created_at, expires_at)
       VALUES (@id, @account_id, @billed_to, @questions, @input_tokens, @amount_micro, @period_start,
         @request_id, @created_at, @expires_at)`,
    ),
    // Deleting is how settle, release and the sweeper agree: whichever deletes the row owns it.
    takeReservation: db.prepare<[string], ReservationRow>("DELETE FROM reservations WHERE id = ? RETURNING *"),
    expiredReservations: db.prepare<[number], string>("SELECT id FROM reservations WHERE expires_at <= ?").pluck(),
    insertEntry: db.prepare(
      `INSERT INTO ledger (account_id, at, kind, amount_micro, questions, input_tokens, period_start, request_id)
       VALUES (@account_id, @at, @kind, @amount_micro, @questions, @input_tokens, @period_start, @request_id)`,
    ),
    completeIdempotency: db.prepare(
      `UPDATE idempotency_keys SET state = 'done', response = ?, expires_at = ?
       WHERE account_id = ? AND key = ? AND owner = ? AND state = 'running'`,
    ),
    forgetIdempotency: db.prepare("DELETE FROM idempotency_keys WHERE expires_at <= ?"),
    forgetRateWindows: db.prepare("DELETE FROM rate_windows WHERE window_start < ?"),
  };
}
