import { periodContaining } from "../money/periods.js";
import { chargeFor } from "../money/money.js";
import { plural } from "../judgment/plural.js";
import { accountPayer, createBillingService, type BillingService, type Payer } from "../services/billing.js";
import { InsufficientFundsError } from "../services/errors.js";
import { fakeClock } from "../store/test-helpers.js";
import type { PlanInput, Store } from "../store/types.js";
import { newTestDatabase, type StoreEngine, type TestDatabase } from "./databases.js";

/**
 * Store-level billing tests: a real store (SQLite file or PostgreSQL schema) on a fake clock,
 * one plan and one account, the billing service over it, and raw access to the same database
 * to dump or tamper with every table.
 */
export interface BillingFixture {
  store: Store;
  billing: BillingService;
  /** The account's payer, as authentication would give it (its terms read now). */
  payer(): Promise<Payer>;
  clock: ReturnType<typeof fakeClock>;
  database: TestDatabase;
  planId: string;
  accountId: string;
  /** Closes the store and drops the database. */
  close(): Promise<void>;
}

/** 2026-01-31T10:00:00.000Z: a month end, so the next period start is clamped to 28 February. */
export const JAN_31 = Date.UTC(2026, 0, 31, 10, 0, 0, 0);

export async function openBillingStore(
  engine: StoreEngine,
  options: { plan?: Partial<PlanInput>; balanceMicro?: number; start?: number; reservationTtlMs?: number } = {},
): Promise<BillingFixture> {
  const clock = fakeClock(options.start ?? JAN_31);
  const database = newTestDatabase(engine);
  const store = await database.store({ now: clock.now, reservationTtlMs: options.reservationTtlMs ?? 60_000 });
  const plan = await store.plans.create({
    name: `plan ${Math.random().toString(36).slice(2)}`,
    requestsPerMinute: 1000,
    allowanceQuestions: 0,
    pricePerMillion: 1_000_000,
    ...options.plan,
  });
  const account = await store.accounts.create({ name: "billing test", plan: plan.id });
  if (options.balanceMicro) await store.ledger.topUp(account.id, options.balanceMicro, "test balance");
  return {
    store,
    billing: createBillingService(store, clock.now),
    payer: () => payerOf(store, account.id),
    clock,
    database,
    planId: plan.id,
    accountId: account.id,
    close: () => database.drop(),
  };
}

/** Fixtures of one engine for a test file; `closeAll()` (in afterEach) closes and drops every one opened. */
export function billingStores(engine: StoreEngine) {
  const opened: BillingFixture[] = [];
  return {
    async open(options: Parameters<typeof openBillingStore>[1] = {}): Promise<BillingFixture> {
      const fixture = await openBillingStore(engine, options);
      opened.push(fixture);
      return fixture;
    },
    async closeAll(): Promise<void> {
      for (const fixture of opened.splice(0)) await fixture.close();
    },
  };
}

/** The account's payer with its current terms, as KeysRepository.authenticate reads them. */
export async function payerOf(store: Store, accountId: string): Promise<Payer> {
  const account = (await store.accounts.get(accountId))!;
  return accountPayer(account, (await store.plans.get(account.planId))!);
}

/** The InsufficientFundsError (the 402) an attempt was refused with; throws if it was not refused so. */
export async function refusalOf(attempt: Promise<unknown>): Promise<InsufficientFundsError> {
  let outcome: unknown;
  try {
    outcome = await attempt;
  } catch (error) {
    if (error instanceof InsufficientFundsError) return error;
    throw error;
  }
  throw new Error(`expected a refusal for insufficient funds, got ${JSON.stringify(outcome)}`);
}

/** Reservations rows as the database has them. */
export async function reservationRows(database: TestDatabase): Promise<Record<string, unknown>[]> {
  const raw = await database.raw();
  try {
    return (await raw.db.selectFrom("reservations").selectAll().orderBy("created_at").orderBy("id").execute()) as Record<string, unknown>[];
  } finally {
    await raw.close();
  }
}

/** A store-level hold request for the account's current period at the plan's price, as the billing service makes it. */
export function holdFor(payer: Payer, at: number, input: { questions: number; inputTokens: number; requestId: string }) {
  return {
    accountId: payer.accountId,
    periodStart: periodContaining(payer.terms.createdAt, at).start,
    amountMicro: chargeFor(input.inputTokens, payer.terms.pricePerMillion),
    ...input,
  };
}

/** The ceiling of tokens × price / 1e6, computed here without the code under test. */
export function expectedCharge(inputTokens: number, pricePerMillion: number): number {
  const product = BigInt(inputTokens) * BigInt(pricePerMillion);
  const whole = product / 1_000_000n;
  return Number(product % 1_000_000n === 0n ? whole : whole + 1n);
}

/** Exact euros from micro-euros by string surgery (two to six decimals), independent of money.ts. */
export function expectedEuros(micros: number): string {
  const digits = String(micros).padStart(7, "0");
  let fraction = digits.slice(-6);
  while (fraction.length > 2 && fraction.endsWith("0")) fraction = fraction.slice(0, -1);
  return `${digits.slice(0, -6)}.${fraction}`;
}

/** The 402's explanation, spelled out here independently of services/billing.ts. */
export function expectedRefusalMessage(
  need: { questions: number; chargeMicro: number },
  had: { left: number; balanceMicro: number; heldMicro?: number },
): string {
  const held = had.heldMicro ? `, of which €${expectedEuros(had.heldMicro)} is held by requests in flight` : "";
  return (
    `this request needs ${plural(need.questions, "question")} of plan allowance (${had.left} left this period) ` +
    `or €${expectedEuros(need.chargeMicro)} of prepaid balance (€${expectedEuros(had.balanceMicro)}${held}); nothing was charged`
  );
}
