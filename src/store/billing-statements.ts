import type { Database } from "./database.js";
import type { RowOf } from "./schema.js";

export type ReservationRow = Omit<RowOf<"reservations">, "created_at">;

export interface StandingRow {
  balance_micro: number;
  reserved_micro: number;
  allowance_questions: number;
  used: number | null;
  reserved: number | null;
}

/**
 * The statements every billed request runs (see `Statement` in database.ts for why these are
 * plain SQL). Each debit is one conditional UPDATE, and every UPDATE returns what it changed so
 * nothing is read again while the row's lock is held.
 */
export function billingStatements(database: Database) {
  const s = database.statement.bind(database);
  return {
    /** Params: periodStart, accountId. */
    standing: s<StandingRow>(
      `SELECT a.balance_micro, a.reserved_micro, p.allowance_questions, u.used, u.reserved
       FROM accounts AS a JOIN plans AS p ON p.id = a.plan_id
       LEFT JOIN plan_usage AS u ON u.account_id = a.id AND u.period_start = ?
       WHERE a.id = ?`,
    ),
    /** Params: accountId, periodStart. */
    openPeriod: s<never>(`INSERT INTO plan_usage (account_id, period_start) VALUES (?, ?) ON CONFLICT (account_id, period_start) DO NOTHING`),
    /**
     * Params: questions, accountId, periodStart, questions, accountId. The allowance is read in
     * the same statement as the debit, so a plan change cannot slip between them.
     */
    holdOnPlan: s<{ used: number; reserved: number }>(
      `UPDATE plan_usage SET reserved = reserved + ?
       WHERE account_id = ? AND period_start = ?
         AND used + reserved + ? <= (SELECT p.allowance_questions FROM accounts AS a JOIN plans AS p ON p.id = a.plan_id WHERE a.id = ?)
       RETURNING used, reserved`,
    ),
    /** Params: amountMicro, accountId, amountMicro. */
    holdOnBalance: s<{ balance_micro: number; reserved_micro: number }>(
      `UPDATE accounts SET reserved_micro = reserved_micro + ?
       WHERE id = ? AND balance_micro - reserved_micro >= ?
       RETURNING balance_micro, reserved_micro`,
    ),
    /** Params: the columns in the order named. */
    insertReservation: s<never>(
      `INSERT INTO reservations (id, account_id, billed_to, questions, input_tokens, amount_micro, period_start, request_id, expires_at, created_at, key_id, model)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    /**
     * Params: amountMicro, keyId, amountMicro. The key's budget is checked in the statement that
     * takes its hold, like the balance: what is spent and held plus this hold stays within it.
     */
    holdOnKey: s<{ id: string }>(
      `UPDATE api_keys SET held_micro = held_micro + ?
       WHERE id = ? AND (budget_micro IS NULL OR spent_micro + held_micro + ? <= budget_micro)
       RETURNING id`,
    ),
    /** Params: keyId. */
    keySpend: s<{ budget_micro: number | null; spent_micro: number; held_micro: number }>(
      `SELECT budget_micro, spent_micro, held_micro FROM api_keys WHERE id = ?`,
    ),
    /** Params: amountMicro, keyId. */
    releaseOnKey: s<{ id: string }>(`UPDATE api_keys SET held_micro = held_micro - ? WHERE id = ? RETURNING id`),
    /** Params: heldMicro, amountMicro, keyId. */
    chargeKey: s<{ id: string }>(`UPDATE api_keys SET held_micro = held_micro - ?, spent_micro = spent_micro + ? WHERE id = ? RETURNING id`),
    /** Params: id. Deleting is how settle, release and the sweeper agree: whoever deletes the row owns it. */
    take: s<ReservationRow>(`DELETE FROM reservations WHERE id = ? RETURNING *`),
    /** Params: questions, accountId, periodStart. */
    releaseOnPlan: s<{ account_id: string }>(`UPDATE plan_usage SET reserved = reserved - ? WHERE account_id = ? AND period_start = ? RETURNING account_id`),
    /** Params: amountMicro, accountId. */
    releaseOnBalance: s<{ id: string }>(`UPDATE accounts SET reserved_micro = reserved_micro - ? WHERE id = ? RETURNING id`),
    /** Params: account_id, at, kind, amount_micro, questions, input_tokens, period_start, request_id, key_id, model. */
    insertLedger: s<never>(
      `INSERT INTO ledger (account_id, at, kind, amount_micro, questions, input_tokens, period_start, request_id, key_id, model)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    /** Params: questions, questions, accountId, periodStart. */
    chargePlan: s<{ used: number; reserved: number }>(
      `UPDATE plan_usage SET reserved = reserved - ?, used = used + ? WHERE account_id = ? AND period_start = ? RETURNING used, reserved`,
    ),
    /** Params: heldMicro, amountMicro, accountId. */
    chargeBalance: s<{ balance_micro: number; reserved_micro: number }>(
      `UPDATE accounts SET reserved_micro = reserved_micro - ?, balance_micro = balance_micro - ? WHERE id = ?
       RETURNING balance_micro, reserved_micro`,
    ),
    /** Params: response, expiresAt, accountId, key, owner. */
    completeIdempotencyKey: s<{ owner: string }>(
      `UPDATE idempotency_keys SET state = 'done', response = ?, expires_at = ?
       WHERE account_id = ? AND "key" = ? AND owner = ? AND state = 'running'
       RETURNING owner`,
    ),
    /**
     * Params: expiresAt, accountId, key, owner. A row only while the request still owns its key;
     * on PostgreSQL it also locks the key's row, so no retry can take it before this commits.
     */
    keepIdempotencyClaim: s<{ owner: string }>(
      `UPDATE idempotency_keys SET expires_at = CASE WHEN expires_at > ? THEN expires_at ELSE ? END
       WHERE account_id = ? AND "key" = ? AND owner = ? AND state = 'running'
       RETURNING owner`,
    ),
  };
}
