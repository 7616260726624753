import { afterEach, describe, expect, it } from "vitest";
import { MAX_MICROS } from "../billing/money.js";
import { dumpTables, openBillingStore, rawDb, type BillingFixture } from "../testing/billing-store.js";
import { useTempDir } from "./test-helpers.js";

/** The ledger: append-only, every balance and period usage equal to the sum of its entries, bounded top-ups. */

const temp = useTempDir();
const open: BillingFixture[] = [];
afterEach(() => {
  for (const fixture of open.splice(0)) fixture.store.close();
  temp.cleanup();
});

/** An account with history: a top-up, plan and balance charges, and one hold of each kind in flight. */
function busyAccount() {
  const t = openBillingStore(temp.dir(), { plan: { allowanceQuestions: 3, pricePerMillion: 1_000_000 }, balanceMicro: 5_000 });
  open.push(t);
  const reserve = (questions: number, inputTokens: number) => {
    const outcome = t.store.billing.reserve({ accountId: t.accountId, questions, inputTokens, requestId: "req_x" });
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    return outcome.reservation;
  };
  t.store.billing.settle(reserve(1, 10));
  t.store.billing.settle(reserve(3, 250)); // balance: 250 µ€
  reserve(1, 10); // plan hold in flight
  reserve(2, 400); // balance hold in flight
  return t;
}

function tamper(path: string, sql: string): void {
  const db = rawDb(path);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

describe("ledger.check()", () => {
  it("agrees with a store that has only been used through its API", () => {
    const t = busyAccount();
    const check = t.store.ledger.check();
    expect(check, JSON.stringify(check)).toEqual({ ok: true, accounts: 1, mismatches: [] });
    expect(t.store.ledger.usage(t.accountId)).toMatchObject({ used: 1, reserved: 1, balanceMicro: 4_750, reservedMicro: 400 });
  });

  const tampering = [
    ["a balance", "UPDATE accounts SET balance_micro = balance_micro + 1", "balance", 4_751, 4_750],
    ["a held amount", "UPDATE accounts SET reserved_micro = 0", "reserved balance", 0, 400],
    ["a period's used questions", "UPDATE plan_usage SET used = 2", "used", 2, 1],
    ["a period's held questions", "UPDATE plan_usage SET reserved = 0", "reserved", 0, 1],
    ["a vanished reservation", "DELETE FROM reservations WHERE billed_to = 'balance'", "reserved balance", 400, 0],
  ] as const;
  for (const [what, sql, kind, column, ledgerSum] of tampering) {
    it(`detects ${what} that differs from the ledger`, () => {
      const t = busyAccount();
      tamper(t.path, sql);
      const check = t.store.ledger.check();
      expect(check, JSON.stringify(check)).toMatchObject({ ok: false, accounts: 1 });
      expect(check.mismatches, JSON.stringify(check)).toEqual([
        expect.objectContaining({ accountId: t.accountId, what: expect.stringMatching(new RegExp(`${kind}$`)), column, ledgerSum }),
      ]);
    });
  }

  it("detects a period's usage row that vanished while its ledger entries and holds remain (usage reset to nothing)", () => {
    const t = busyAccount();
    tamper(t.path, "DELETE FROM plan_usage");
    // The allowance is now free again: the next request is held on the plan as if none was used.
    const check = t.store.ledger.check();
    expect(check, JSON.stringify(check)).toMatchObject({ ok: false });
    expect(check.mismatches, JSON.stringify(check)).toContainEqual(
      expect.objectContaining({ accountId: t.accountId, what: expect.stringMatching(/used$/), ledgerSum: 1 }),
    );
  });
});

describe("the ledger is append-only", () => {
  for (const sql of [
    "UPDATE ledger SET amount_micro = 0",
    "UPDATE ledger SET note = 'edited' WHERE kind = 'top_up'",
    "DELETE FROM ledger WHERE kind = 'charge'",
    "DELETE FROM ledger",
  ]) {
    it(`refuses: ${sql}`, () => {
      const t = busyAccount();
      const before = dumpTables(t.path);
      expect(() => tamper(t.path, sql)).toThrow(/append-only/);
      expect(dumpTables(t.path)).toEqual(before);
    });
  }

  it("a transaction that would overdraw is refused by the database itself, whatever the caller", () => {
    const t = busyAccount();
    const before = dumpTables(t.path);
    expect(() => tamper(t.path, "UPDATE accounts SET balance_micro = -1")).toThrow(/CHECK constraint/);
    expect(() => tamper(t.path, "UPDATE accounts SET reserved_micro = balance_micro + 1")).toThrow(/CHECK constraint/);
    expect(() => tamper(t.path, "UPDATE plan_usage SET reserved = -1")).toThrow(/CHECK constraint/);
    expect(dumpTables(t.path)).toEqual(before);
  });
});

describe("top-ups", () => {
  it("credit the balance and append one entry each", () => {
    const t = openBillingStore(temp.dir());
    open.push(t);
    t.clock.advance(5);
    const first = t.store.ledger.topUp(t.accountId, 1_500_000, "invoice 1");
    const second = t.store.ledger.topUp(t.accountId, 1);
    expect(first).toMatchObject({ balanceMicro: 1_500_000, entry: { kind: "top_up", amountMicro: 1_500_000, note: "invoice 1", at: t.clock.now() } });
    expect(second).toMatchObject({ balanceMicro: 1_500_001, entry: { amountMicro: 1, note: null } });
    expect(t.store.ledger.entries(t.accountId).map((e) => e.id)).toEqual([second.entry.id, first.entry.id]);
    expect(t.store.ledger.entries(t.accountId, { limit: 1 })).toHaveLength(1);
    expect(t.store.ledger.check().ok).toBe(true);
  });

  it("refuse amounts that are not positive whole micro-euros, unknown accounts and long notes, changing nothing", () => {
    const t = openBillingStore(temp.dir(), { balanceMicro: 7 });
    open.push(t);
    const before = dumpTables(t.path);
    for (const amount of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, MAX_MICROS + 1]) {
      expect(() => t.store.ledger.topUp(t.accountId, amount), String(amount)).toThrow(expect.objectContaining({ code: "invalid_input" }));
    }
    expect(() => t.store.ledger.topUp(t.accountId, 1, "x".repeat(501))).toThrow(expect.objectContaining({ code: "invalid_input" }));
    expect(() => t.store.ledger.topUp("acct_nobody", 1)).toThrow(expect.objectContaining({ code: "account_not_found" }));
    expect(dumpTables(t.path)).toEqual(before);
  });

  it("may bring the balance up to the largest safe amount and not one micro-euro past it", () => {
    const t = openBillingStore(temp.dir(), { balanceMicro: 7 });
    open.push(t);
    expect(t.store.ledger.topUp(t.accountId, MAX_MICROS - 7).balanceMicro).toBe(MAX_MICROS);
    const before = dumpTables(t.path);
    expect(() => t.store.ledger.topUp(t.accountId, 1)).toThrow(expect.objectContaining({ code: "invalid_input" }));
    expect(dumpTables(t.path)).toEqual(before);
    expect(t.store.ledger.check().ok).toBe(true);
  });
});
