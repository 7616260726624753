import type { Database } from "./database.js";
import { namedStatement } from "./named-statement.js";
import type { RowOf } from "./schema.js";

export type ReservationRow = Omit<RowOf<"reservations">, "created_at">;

type LedgerInsert = RowOf<
  "ledger",
  "account_id" | "at" | "kind" | "amount_micro" | "questions" | "input_tokens" | "period_start" | "request_id" | "key_id" | "model"
>;

export interface StandingRow {
  balance_micro: number;
  reserved_micro: number;
  allowance_questions: number;
  used: number | null;
  reserved: number | null;
}

/**
 * The statements every billed request runs (see `Statement` in database.ts for why these are
 * plain SQL), their parameters named (named-statement.ts): the money path passes up to a dozen
 * values, and a swapped pair would be a wrong charge nothing else catches. Each debit is one
 * conditional UPDATE, and every UPDATE returns what it changed so nothing is read again while
 * the row's lock is held.
 */
export function billingStatements(database: Database) {
  const s = <Params extends object, Row = never>(text: string) => namedStatement<Params, Row>(database, text);
  type Account = { accountId: string };
  type Period = { accountId: string; periodStart: number };
  type Key = { keyId: string };
  type Claim = { accountId: string; key: string; owner: string };
  return {
    standing: s<Period, StandingRow>(
      `SELECT a.balance_micro, a.reserved_micro, p.allowance_questions, u.used, u.reserved
       FROM accounts AS a JOIN plans AS p ON p.id = a.plan_id
       LEFT JOIN plan_usage AS u ON u.account_id = a.id AND u.period_start = :periodStart
       WHERE a.id = :accountId`,
    ),
    openPeriod: s<Period>(
      `INSERT INTO plan_usage (account_id, period_start) VALUES (:accountId, :periodStart) ON CONFLICT (account_id, period_start) DO NOTHING`,
    ),
    /** The allowance is read in the same statement as the debit, so a plan change cannot slip between them. */
    holdOnPlan: s<Period & { questions: number }, { used: number; reserved: number }>(
      `UPDATE plan_usage SET reserved = reserved + :questions
       WHERE account_id = :accountId AND period_start = :periodStart
         AND used + reserved + :questions <= (SELECT p.allowance_questions FROM accounts AS a JOIN plans AS p ON p.id = a.plan_id WHERE a.id = :accountId)
       RETURNING used, reserved`,
    ),
    holdOnBalance: s<Account & { amountMicro: number }, { balance_micro: number; reserved_micro: number }>(
      `UPDATE accounts SET reserved_micro = reserved_micro + :amountMicro
       WHERE id = :accountId AND balance_micro - reserved_micro >= :amountMicro
       RETURNING balance_micro, reserved_micro`,
    ),
    /** The row by its columns' own names. */
    insertReservation: s<RowOf<"reservations">>(
      `INSERT INTO reservations (id, account_id, billed_to, questions, input_tokens, amount_micro, period_start, request_id, expires_at, created_at, key_id, model)
       VALUES (:id, :account_id, :billed_to, :questions, :input_tokens, :amount_micro, :period_start, :request_id, :expires_at, :created_at, :key_id, :model)`,
    ),
    /** The key's budget is checked in the statement that takes its hold, like the balance: what is spent and held plus this hold stays within it. */
    holdOnKey: s<Key & { amountMicro: number }, { id: string }>(
      `UPDATE api_keys SET held_micro = held_micro + :amountMicro
       WHERE id = :keyId AND (budget_micro IS NULL OR spent_micro + held_micro + :amountMicro <= budget_micro)
       RETURNING id`,
    ),
    keySpend: s<Key, { budget_micro: number | null; spent_micro: number; held_micro: number }>(
      `SELECT budget_micro, spent_micro, held_micro FROM api_keys WHERE id = :keyId`,
    ),
    releaseOnKey: s<Key & { amountMicro: number }, { id: string }>(`UPDATE api_keys SET held_micro = held_micro - :amountMicro WHERE id = :keyId RETURNING id`),
    chargeKey: s<Key & { heldMicro: number; amountMicro: number }, { id: string }>(
      `UPDATE api_keys SET held_micro = held_micro - :heldMicro, spent_micro = spent_micro + :amountMicro WHERE id = :keyId RETURNING id`,
    ),
    /** Deleting is how settle, release and the sweeper agree: whoever deletes the row owns it. */
    take: s<{ id: string }, ReservationRow>(`DELETE FROM reservations WHERE id = :id RETURNING *`),
    releaseOnPlan: s<Period & { questions: number }, { account_id: string }>(
      `UPDATE plan_usage SET reserved = reserved - :questions WHERE account_id = :accountId AND period_start = :periodStart RETURNING account_id`,
    ),
    releaseOnBalance: s<Account & { amountMicro: number }, { id: string }>(
      `UPDATE accounts SET reserved_micro = reserved_micro - :amountMicro WHERE id = :accountId RETURNING id`,
    ),
    /** The entry by its columns' own names. */
    insertLedger: s<LedgerInsert>(
      `INSERT INTO ledger (account_id, at, kind, amount_micro, questions, input_tokens, period_start, request_id, key_id, model)
       VALUES (:account_id, :at, :kind, :amount_micro, :questions, :input_tokens, :period_start, :request_id, :key_id, :model)`,
    ),
    chargePlan: s<Period & { questions: number }, { used: number; reserved: number }>(
      `UPDATE plan_usage SET reserved = reserved - :questions, used = used + :questions
       WHERE account_id = :accountId AND period_start = :periodStart RETURNING used, reserved`,
    ),
    chargeBalance: s<Account & { heldMicro: number; amountMicro: number }, { balance_micro: number; reserved_micro: number }>(
      `UPDATE accounts SET reserved_micro = reserved_micro - :heldMicro, balance_micro = balance_micro - :amountMicro WHERE id = :accountId
       RETURNING balance_micro, reserved_micro`,
    ),
    completeIdempotencyKey: s<Claim & { response: string; expiresAt: number }, { owner: string }>(
      `UPDATE idempotency_keys SET state = 'done', response = :response, expires_at = :expiresAt
       WHERE account_id = :accountId AND "key" = :key AND owner = :owner AND state = 'running'
       RETURNING owner`,
    ),
    /**
     * Keeps the claim until at least `until`. A row only while the request still owns its key;
     * on PostgreSQL it also locks the key's row, so no retry can take it before this commits.
     */
    keepIdempotencyClaim: s<Claim & { until: number }, { owner: string }>(
      `UPDATE idempotency_keys SET expires_at = CASE WHEN expires_at > :until THEN expires_at ELSE :until END
       WHERE account_id = :accountId AND "key" = :key AND owner = :owner AND state = 'running'
       RETURNING owner`,
    ),
  };
}
