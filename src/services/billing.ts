import { allowanceUnits, chargeFor, formatEuros } from "../money/money.js";
import { plural } from "../judgment/plural.js";
import { periodContaining } from "../money/periods.js";
import type { Account, AccountTerms, BilledTo, IdempotencyClaim, Plan, Reservation, SettledCharge, Standing, Store } from "../store/types.js";
import { IdempotencyKeyLostError, InsufficientFundsError, KeyBudgetExhaustedError, UnknownAccountError } from "./errors.js";

/** Who is paying: the authenticated key's account and the terms read with it. */
export interface Payer {
  accountId: string;
  terms: AccountTerms;
  /** The key the request came with: what the balance pays counts against the key's budget, and its ledger entry names it. */
  keyId?: string;
}

/**
 * The account as a payer without a key (a fit from the CLI), on its plan's terms as
 * KeysRepository.authenticate reads them with a key: the plan's allowance and price, its models.
 */
export function accountPayer(account: Account, plan: Plan): Payer {
  return {
    accountId: account.id,
    terms: {
      createdAt: account.createdAt,
      planId: plan.id,
      requestsPerMinute: plan.requestsPerMinute,
      allowanceQuestions: plan.allowanceQuestions,
      pricePerMillion: plan.pricePerMillion,
      ...(plan.allowedModels && { allowedModels: plan.allowedModels }),
    },
  };
}

export interface Settled {
  billedTo: BilledTo;
  standing: Standing;
}

export interface IdempotencyInput {
  accountId: string;
  key: string;
  requestHash: string;
  owner: string;
}

/**
 * The billing policy: which period a request counts in, what it costs, who pays, and why not.
 * The store applies the amounts computed here (one conditional statement per debit).
 */
export interface BillingService {
  /** Holds the charge; throws InsufficientFundsError (402) or UnknownAccountError, charging nothing. */
  /** With `idempotencyKey`, only while the request owns it (else IdempotencyKeyLostError), extending its claim. */
  reserve(payer: Payer, input: ReserveInput): Promise<Reservation>;
  /**
   * Undefined when the hold expired and was released first (the request is then not charged).
   * `actualInputTokens` settles a hold taken for an upper bound at what was read, never above the hold.
   */
  settle(reservation: Reservation, idempotency?: { key: string; body: string }, actualInputTokens?: number): Promise<Settled | undefined>;
  release(reservationId: string): Promise<boolean>;
  standing(payer: Payer): Promise<Standing | undefined>;
  /** What has expired, each repository sweeping its own rows: holds released, idempotency keys and rate windows forgotten. */
  sweep(): Promise<Swept>;
  claimIdempotencyKey(input: IdempotencyInput): Promise<IdempotencyClaim>;
  abandonIdempotencyKey(input: Omit<IdempotencyInput, "requestHash">): Promise<void>;
}

export interface Swept {
  reservations: number;
  idempotencyKeys: number;
  rateWindows: number;
}

export interface ReserveInput {
  questions: number;
  inputTokens: number;
  requestId: string;
  idempotencyKey?: string;
  /**
   * The model answering: its id goes on the ledger, and its price multiplier (thousandths)
   * scales the charge and the allowance units the questions count for. Absent: ×1, unrecorded.
   */
  model?: { id: string; multiplierMilli: number };
}

export function createBillingService(store: Store, now: () => number): BillingService {
  // The terms a hold was taken with, remembered from reserve for settle: the price the hold was
  // computed at. A reservation from elsewhere (a test, another process) is charged pro rata of its hold.
  const heldWith = new WeakMap<Reservation, { terms: AccountTerms; multiplierMilli: number }>();
  const actualCharge = (reservation: Reservation, inputTokens: number): SettledCharge => {
    const tokens = Math.max(0, Math.min(inputTokens, reservation.inputTokens));
    const held = heldWith.get(reservation);
    const amountMicro =
      held !== undefined
        ? chargeFor(tokens, held.terms.pricePerMillion, held.multiplierMilli)
        : reservation.inputTokens === 0
          ? 0
          : Math.ceil((reservation.amountMicro * tokens) / reservation.inputTokens);
    return { inputTokens: tokens, amountMicro: Math.min(amountMicro, reservation.amountMicro) };
  };
  return {
    async reserve(payer, input) {
      const { terms } = payer;
      const periodStart = periodContaining(terms.createdAt, now()).start;
      // At the price read with the key: a plan change applies from the next request.
      const multiplierMilli = input.model?.multiplierMilli ?? 1000;
      const amountMicro = chargeFor(input.inputTokens, terms.pricePerMillion, multiplierMilli);
      const questions = allowanceUnits(input.questions, multiplierMilli);
      // Terms read with the key: a plan whose whole allowance is below Q cannot pay, so the store
      // skips it (a plan changed meanwhile applies from the next request, as its price does).
      const allowanceMayPay = terms.allowanceQuestions >= questions;
      const { model, ...rest } = input;
      const hold = {
        ...rest,
        questions,
        accountId: payer.accountId,
        keyId: payer.keyId,
        periodStart,
        amountMicro,
        allowanceMayPay,
        ...(model && { model: model.id }),
      };
      const outcome = await store.billing.reserve(hold);
      if (outcome.ok) {
        heldWith.set(outcome.reservation, { terms, multiplierMilli });
        return outcome.reservation;
      }
      if (outcome.reason === "account_not_found") throw new UnknownAccountError(`no account ${payer.accountId}`);
      if (outcome.reason === "idempotency_key_lost") {
        throw new IdempotencyKeyLostError("this request outlived its claim on its Idempotency-Key, which a retry has taken; nothing was charged");
      }
      if (outcome.reason === "key_budget_exhausted") {
        const { budgetMicro, spentMicro, heldMicro } = outcome.key;
        const held = heldMicro > 0 ? ` and holds €${formatEuros(heldMicro)} for requests in flight` : "";
        throw new KeyBudgetExhaustedError(
          `this key's budget of €${formatEuros(budgetMicro)} cannot pay €${formatEuros(amountMicro)}: it has spent €${formatEuros(spentMicro)}${held}; nothing was charged`,
          outcome.standing,
        );
      }
      throw new InsufficientFundsError(explainRefusal(questions, amountMicro, outcome.standing), outcome.standing);
    },
    async settle(reservation, idempotency, actualInputTokens) {
      // The standing reported (and stored for replays) is of the period the request was billed
      // to: a hold taken before a period boundary and settled after it used the old period's
      // allowance, so x-plan-usage describes that period, not the new one it took nothing from.
      const charge = actualInputTokens === undefined ? undefined : actualCharge(reservation, actualInputTokens);
      return store.billing.settle(reservation, idempotency, reservation.periodStart, charge);
    },
    release: (reservationId) => store.billing.release(reservationId),
    standing: (payer) => store.billing.standing(payer.accountId, periodContaining(payer.terms.createdAt, now()).start),
    async sweep() {
      const { reservations } = await store.billing.sweep();
      return { reservations, idempotencyKeys: await store.idempotency.sweep(), rateWindows: await store.rateWindows.sweep() };
    },
    claimIdempotencyKey: (input) => store.idempotency.claim(input),
    abandonIdempotencyKey: (input) => store.idempotency.abandon(input),
  };
}

/** The 402's message: what the request needed of each payer, and what each had left. */
export function explainRefusal(questions: number, chargeMicro: number, standing: Standing): string {
  const left = Math.max(0, standing.allowance - standing.planUsed);
  const held = standing.heldMicro > 0 ? `, of which €${formatEuros(standing.heldMicro)} is held by requests in flight` : "";
  return (
    `this request needs ${plural(questions, "question")} of plan allowance (${left} left this period) ` +
    `or €${formatEuros(chargeMicro)} of prepaid balance (€${formatEuros(standing.balanceMicro)}${held}); nothing was charged`
  );
}
