import { billingStatements, type ReservationRow } from "./billing-statements.js";
import type { Database, Queries } from "./database.js";
import { newId } from "./random.js";
import type { BillingRepository, HoldRequest, Reservation, ReserveOutcome, Standing } from "./types.js";

/** How long a completed request's response is replayed for its Idempotency-Key. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

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
  keyId: row.key_id,
  ...(row.model !== null && { model: row.model }),
});

/** Thrown inside a transaction to roll it back when nothing can pay. */
class NothingCanPay extends Error {}

/** Thrown inside a transaction to roll it back when the balance could pay but the key's budget cannot. */
class KeyCannotPay extends Error {}

/**
 * Moving a hold must touch exactly the row the hold was taken on; anything else means the
 * records were altered behind the service's back, and the transaction is rolled back rather
 * than writing a ledger entry that no balance or usage reflects.
 */
function theOnly<T>(rows: T[], what: string): T {
  if (rows.length !== 1) throw new Error(`billing records are inconsistent: ${what} changed ${rows.length} rows`);
  return rows[0];
}

/**
 * A standing with the parts a locking statement just returned. The locking UPDATEs return what
 * they changed, so neither transaction reads again while it holds an account's or a period's row
 * lock: one account's requests take turns on that lock, and each holds it for fewer round trips.
 */
function withChanged(standing: Standing, changed: { used?: number; reserved?: number; balance_micro?: number; reserved_micro?: number }): Standing {
  return {
    planUsed: changed.used === undefined ? standing.planUsed : changed.used + changed.reserved!,
    allowance: standing.allowance,
    balanceMicro: changed.balance_micro ?? standing.balanceMicro,
    heldMicro: changed.reserved_micro ?? standing.heldMicro,
  };
}

type Statements = ReturnType<typeof billingStatements>;

/** The balance and the period's usage of one account, as headers report them. */
async function readStanding(st: Statements, q: Queries, accountId: string, periodStart: number): Promise<Standing | undefined> {
  const [row] = await st.standing.all(q, { accountId, periodStart });
  if (!row) return undefined;
  return {
    planUsed: (row.used ?? 0) + (row.reserved ?? 0),
    allowance: row.allowance_questions,
    balanceMicro: row.balance_micro,
    heldMicro: row.reserved_micro,
  };
}

/**
 * Reserve, settle and release. Every debit is one conditional UPDATE ("only if enough
 * remains"), so concurrent requests, other processes and other instances on the same database
 * can never overdraw; the model runs between these short transactions, never inside one.
 */
export function createBillingRepository(database: Database, now: () => number, reservationTtlMs: number): BillingRepository {
  const { db } = database;
  const st = billingStatements(database);

  const holdOnPlan = async (trx: Queries, input: HoldRequest) => {
    const { accountId, periodStart, questions } = input;
    await st.openPeriod.all(trx, { accountId, periodStart });
    const [changed] = await st.holdOnPlan.all(trx, { accountId, periodStart, questions });
    return changed;
  };

  /** Who pays, and the row that paying changed (its lock now held until commit). */
  const hold = async (trx: Queries, input: HoldRequest) => {
    const onPlan = input.allowanceMayPay === false ? undefined : await holdOnPlan(trx, input);
    if (onPlan) return { billedTo: "plan" as const, changed: onPlan };
    const { accountId, amountMicro } = input;
    const [onBalance] = await st.holdOnBalance.all(trx, { accountId, amountMicro });
    if (!onBalance) throw new NothingCanPay();
    // After the account's row, as settle and release take them: one lock order, no deadlock.
    if (input.keyId !== undefined && !(await st.holdOnKey.all(trx, { keyId: input.keyId, amountMicro }))[0]) throw new KeyCannotPay();
    return { billedTo: "balance" as const, changed: onBalance };
  };

  const reserve = async (input: HoldRequest): Promise<ReserveOutcome> => {
    try {
      return await database.transaction(async (trx) => {
        const at = now();
        if (input.idempotencyKey !== undefined) {
          // The claim lives as long as the hold: a retry cannot take the key while this request may still settle.
          const [kept] = await st.keepIdempotencyClaim.all(trx, {
            accountId: input.accountId,
            key: input.idempotencyKey,
            owner: input.requestId,
            until: at + reservationTtlMs,
          });
          if (!kept) return { ok: false, reason: "idempotency_key_lost" } as const;
        }
        const before = await readStanding(st, trx, input.accountId, input.periodStart);
        if (!before) return { ok: false, reason: "account_not_found" } as const;
        const { billedTo, changed } = await hold(trx, input);
        const row: ReservationRow = {
          id: newId("res"),
          account_id: input.accountId,
          billed_to: billedTo,
          questions: input.questions,
          input_tokens: input.inputTokens,
          amount_micro: billedTo === "plan" ? 0 : input.amountMicro,
          period_start: input.periodStart,
          request_id: input.requestId,
          expires_at: at + reservationTtlMs,
          // Only a balance hold is also taken on the key: what the allowance pays costs no euros.
          key_id: billedTo === "balance" ? (input.keyId ?? null) : null,
          model: input.model ?? null,
        };
        await st.insertReservation.all(trx, { ...row, created_at: at });
        // The returned hold names the request's key even when the allowance pays, so its ledger entry does.
        return { ok: true, reservation: { ...toReservation(row), keyId: input.keyId ?? null }, standing: withChanged(before, changed) } as const;
      });
    } catch (error) {
      if (!(error instanceof NothingCanPay || error instanceof KeyCannotPay)) throw error;
      const standing = await readStanding(st, db, input.accountId, input.periodStart);
      if (!standing) return { ok: false, reason: "account_not_found" };
      if (error instanceof NothingCanPay) return { ok: false, reason: "insufficient_funds", standing };
      const [spend] = await st.keySpend.all(db, { keyId: input.keyId! });
      const key = { budgetMicro: spend?.budget_micro ?? 0, spentMicro: spend?.spent_micro ?? 0, heldMicro: spend?.held_micro ?? 0 };
      return { ok: false, reason: "key_budget_exhausted", standing, key };
    }
  };

  /** Gives a taken reservation's hold back to whoever held it. */
  const giveBack = async (trx: Queries, row: ReservationRow) => {
    const changed =
      row.billed_to === "plan"
        ? await st.releaseOnPlan.all(trx, { accountId: row.account_id, periodStart: row.period_start, questions: row.questions })
        : await st.releaseOnBalance.all(trx, { accountId: row.account_id, amountMicro: row.amount_micro });
    theOnly<unknown>(changed, "release");
    if (row.key_id !== null) theOnly(await st.releaseOnKey.all(trx, { keyId: row.key_id, amountMicro: row.amount_micro }), "release on the key");
  };

  /** Whether the request still owns its key (keeping it, and on PostgreSQL locking its row, until commit). */
  const ownsKey = async (trx: Queries, row: ReservationRow, key: string) => {
    const at = now();
    const [kept] = await st.keepIdempotencyClaim.all(trx, { accountId: row.account_id, key, owner: row.request_id, until: at });
    return kept !== undefined;
  };

  const release = (reservationId: string) =>
    database.transaction(async (trx) => {
      const [row] = await st.take.all(trx, { id: reservationId });
      if (!row) return false;
      await giveBack(trx, row);
      return true;
    });

  const settle: BillingRepository["settle"] = (reservation, idempotency, standingPeriodStart, charge) =>
    database.transaction(async (trx) => {
      const [row] = await st.take.all(trx, { id: reservation.id });
      if (!row) return undefined;
      if (idempotency && !(await ownsKey(trx, row, idempotency.key))) {
        // A retry took the key over (this request outlived its claim) and is charged itself:
        // this one commits no charge and gives its hold back, in this same transaction.
        await giveBack(trx, row);
        return undefined;
      }
      // The hold is the ceiling: an actual charge can lower what is taken, never raise it.
      const amount = charge ? Math.min(charge.amountMicro, row.amount_micro) : row.amount_micro;
      const tokens = charge ? Math.min(charge.inputTokens, row.input_tokens) : row.input_tokens;
      const at = now();
      const plan = row.billed_to === "plan";
      const period = standingPeriodStart ?? row.period_start;
      // Everything that needs no lock on the account's or the period's row comes first.
      const before = (await readStanding(st, trx, row.account_id, period))!;
      const kind = plan ? "plan" : "charge";
      await st.insertLedger.all(trx, {
        account_id: row.account_id,
        at,
        kind,
        amount_micro: -amount,
        questions: row.questions,
        input_tokens: tokens,
        period_start: plan ? row.period_start : null,
        request_id: row.request_id,
        key_id: reservation.keyId ?? null,
        model: row.model,
      });
      const changed = plan
        ? theOnly(await st.chargePlan.all(trx, { accountId: row.account_id, periodStart: row.period_start, questions: row.questions }), "settle")
        : theOnly(await st.chargeBalance.all(trx, { accountId: row.account_id, heldMicro: row.amount_micro, amountMicro: amount }), "settle");
      if (row.key_id !== null)
        theOnly(await st.chargeKey.all(trx, { keyId: row.key_id, heldMicro: row.amount_micro, amountMicro: amount }), "settle on the key");
      // A hold settled after its period ended changed the old period's usage, not the one reported.
      const reported = plan && period !== row.period_start ? before : withChanged(before, changed);
      const result = { billedTo: row.billed_to, standing: reported };
      if (idempotency) {
        const response = JSON.stringify({ body: idempotency.body, ...result });
        theOnly(
          await st.completeIdempotencyKey.all(trx, {
            accountId: row.account_id,
            key: idempotency.key,
            owner: row.request_id,
            response,
            expiresAt: at + IDEMPOTENCY_RETENTION_MS,
          }),
          "completing the idempotency key",
        );
      }
      return result;
    });

  return {
    reserve,
    settle,
    release,
    async sweep() {
      const at = now();
      const expired = await db.selectFrom("reservations").select("id").where("expires_at", "<=", at).execute();
      let reservations = 0;
      for (const { id } of expired) if (await release(id)) reservations++;
      return { reservations };
    },
    standing: (accountId, periodStart) => readStanding(st, db, accountId, periodStart),
  };
}
