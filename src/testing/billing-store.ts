import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { fakeClock } from "../store/test-helpers.js";
import { createStore } from "../store/store.js";
import type { PlanInput, Store } from "../store/types.js";

/**
 * Store-level billing tests: a real file-backed store on a fake clock, one plan and one account,
 * plus raw access to the same file to dump or tamper with every table.
 */
export interface BillingFixture {
  store: Store;
  clock: ReturnType<typeof fakeClock>;
  path: string;
  planId: string;
  accountId: string;
}

/** 2026-01-31T10:00:00.000Z: a month end, so the next period start is clamped to 28 February. */
export const JAN_31 = Date.UTC(2026, 0, 31, 10, 0, 0, 0);

export function openBillingStore(
  dir: string,
  options: { plan?: Partial<PlanInput>; balanceMicro?: number; start?: number; reservationTtlMs?: number; file?: string } = {},
): BillingFixture {
  const clock = fakeClock(options.start ?? JAN_31);
  const path = join(dir, options.file ?? "billing.db");
  const store = createStore({ path, now: clock.now, reservationTtlMs: options.reservationTtlMs ?? 60_000 });
  const plan = store.plans.create({
    name: `plan ${Math.random().toString(36).slice(2)}`,
    requestsPerMinute: 1000,
    allowanceQuestions: 0,
    pricePerMillion: 1_000_000,
    ...options.plan,
  });
  const account = store.accounts.create({ name: "billing test", plan: plan.id });
  if (options.balanceMicro) store.ledger.topUp(account.id, options.balanceMicro, "test balance");
  return { store, clock, path, planId: plan.id, accountId: account.id };
}

/** A second connection to the same file, for what the store never does (tampering, raw dumps). */
export function rawDb(path: string): BetterSqlite3.Database {
  const db = new BetterSqlite3(path);
  db.pragma("busy_timeout = 5000");
  return db;
}

/** Every row of every table (sorted, so only contents count): compare before/after to prove nothing changed. */
export function dumpTables(path: string): Record<string, string[]> {
  const db = rawDb(path);
  try {
    const tables = db
      .prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all();
    const dump: Record<string, string[]> = {};
    for (const table of tables) {
      dump[table] = db
        .prepare(`SELECT * FROM "${table}"`)
        .all()
        .map((row) => JSON.stringify(row))
        .sort();
    }
    return dump;
  } finally {
    db.close();
  }
}

/** Reservations rows as the database has them. */
export function reservationRows(path: string): Record<string, unknown>[] {
  const db = rawDb(path);
  try {
    return db.prepare("SELECT * FROM reservations ORDER BY created_at, id").all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
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
