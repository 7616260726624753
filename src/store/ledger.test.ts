import { afterEach, describe, expect, it } from "vitest";
import { MAX_MICROS } from "../money/money.js";
import { periodContaining } from "../money/periods.js";
import { billingStores, type BillingFixture } from "../testing/billing-store.js";
import { STORE_ENGINES } from "../testing/databases.js";
import { tamper } from "./test-helpers.js";

/** The ledger: append-only, every balance and period usage equal to the sum of its entries, bounded top-ups. */

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const stores = billingStores(engine);
  afterEach(() => stores.closeAll());

  const usage = async (t: BillingFixture) => t.store.ledger.usage(t.accountId, periodContaining((await t.payer()).terms.createdAt, t.clock.now()));

  /** An account with history: a top-up, plan and balance charges, and one hold of each kind in flight. */
  async function busyAccount() {
    const t = await stores.open({ plan: { allowanceQuestions: 3, pricePerMillion: 1_000_000 }, balanceMicro: 5_000 });
    const reserve = async (questions: number, inputTokens: number) => t.billing.reserve(await t.payer(), { questions, inputTokens, requestId: "req_x" });
    await t.billing.settle(await reserve(1, 10));
    await t.billing.settle(await reserve(3, 250)); // balance: 250 µ€
    await reserve(1, 10); // plan hold in flight
    await reserve(2, 400); // balance hold in flight
    return t;
  }

  describe("ledger.check()", () => {
    it("agrees with a store that has only been used through its API", async () => {
      const t = await busyAccount();
      const check = await t.store.ledger.check();
      expect(check, JSON.stringify(check)).toEqual({ ok: true, accounts: 1, mismatches: [] });
      expect(await usage(t)).toMatchObject({ used: 1, reserved: 1, balanceMicro: 4_750, reservedMicro: 400 });
    });

    const tampering = [
      ["a balance", "UPDATE accounts SET balance_micro = balance_micro + 1", "balance", 4_751, 4_750],
      ["a held amount", "UPDATE accounts SET reserved_micro = 0", "reserved balance", 0, 400],
      ["a period's used questions", "UPDATE plan_usage SET used = 2", "used", 2, 1],
      ["a period's held questions", "UPDATE plan_usage SET reserved = 0", "reserved", 0, 1],
      ["a vanished reservation", "DELETE FROM reservations WHERE billed_to = 'balance'", "reserved balance", 400, 0],
    ] as const;
    for (const [what, statement, kind, column, ledgerSum] of tampering) {
      it(`detects ${what} that differs from the ledger`, async () => {
        const t = await busyAccount();
        await tamper(t.database, statement);
        const check = await t.store.ledger.check();
        expect(check, JSON.stringify(check)).toMatchObject({ ok: false, accounts: 1 });
        expect(check.mismatches, JSON.stringify(check)).toEqual([
          expect.objectContaining({ accountId: t.accountId, what: expect.stringMatching(new RegExp(`${kind}$`)), column, ledgerSum }),
        ]);
      });
    }

    it("detects a period's usage row that vanished while its ledger entries and holds remain (usage reset to nothing)", async () => {
      const t = await busyAccount();
      await tamper(t.database, "DELETE FROM plan_usage");
      // The allowance is now free again: the next request is held on the plan as if none was used.
      const check = await t.store.ledger.check();
      expect(check, JSON.stringify(check)).toMatchObject({ ok: false });
      expect(check.mismatches, JSON.stringify(check)).toContainEqual(
        expect.objectContaining({ accountId: t.accountId, what: expect.stringMatching(/used$/), ledgerSum: 1 }),
      );
    });
  });

  describe("the ledger is append-only, enforced by the database", () => {
    const statements = [
      "UPDATE ledger SET amount_micro = 0",
      "UPDATE ledger SET note = 'edited' WHERE kind = 'top_up'",
      "DELETE FROM ledger WHERE kind = 'charge'",
      "DELETE FROM ledger",
      // SQLite has no TRUNCATE; its DELETE without WHERE (above) is its truncate.
      ...(engine === "postgres" ? ["TRUNCATE ledger", "TRUNCATE ledger CASCADE"] : []),
    ];
    for (const statement of statements) {
      it(`refuses: ${statement}`, async () => {
        const t = await busyAccount();
        const before = await t.database.dump();
        expect(before.ledger, JSON.stringify(before)).toHaveLength(3);
        await expect(tamper(t.database, statement)).rejects.toThrow(/the ledger is append-only/);
        expect(await t.database.dump()).toEqual(before);
      });
    }

    it("a transaction that would overdraw is refused by the database itself, whatever the caller", async () => {
      const t = await busyAccount();
      const before = await t.database.dump();
      const violation = engine === "sqlite" ? /CHECK constraint failed/ : /violates check constraint/;
      await expect(tamper(t.database, "UPDATE accounts SET balance_micro = -1")).rejects.toThrow(violation);
      await expect(tamper(t.database, "UPDATE accounts SET reserved_micro = balance_micro + 1")).rejects.toThrow(violation);
      await expect(tamper(t.database, "UPDATE plan_usage SET reserved = -1")).rejects.toThrow(violation);
      expect(await t.database.dump()).toEqual(before);
    });
  });

  describe("top-ups", () => {
    it("credit the balance and append one entry each", async () => {
      const t = await stores.open();
      t.clock.advance(5);
      const first = await t.store.ledger.topUp(t.accountId, 1_500_000, "invoice 1");
      const second = await t.store.ledger.topUp(t.accountId, 1);
      expect(first).toMatchObject({ balanceMicro: 1_500_000, entry: { kind: "top_up", amountMicro: 1_500_000, note: "invoice 1", at: t.clock.now() } });
      expect(second).toMatchObject({ balanceMicro: 1_500_001, entry: { amountMicro: 1, note: null } });
      expect((await t.store.ledger.entries(t.accountId)).map((e) => e.id)).toEqual([second.entry.id, first.entry.id]);
      expect(await t.store.ledger.entries(t.accountId, { limit: 1 })).toHaveLength(1);
      expect((await t.store.ledger.check()).ok).toBe(true);
    });

    it("refuse amounts that are not positive whole micro-euros, unknown accounts and long notes, changing nothing", async () => {
      const t = await stores.open({ balanceMicro: 7 });
      const before = await t.database.dump();
      for (const amount of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, MAX_MICROS + 1]) {
        await expect(t.store.ledger.topUp(t.accountId, amount), String(amount)).rejects.toThrow(expect.objectContaining({ code: "invalid_input" }));
      }
      await expect(t.store.ledger.topUp(t.accountId, 1, "x".repeat(501))).rejects.toThrow(expect.objectContaining({ code: "invalid_input" }));
      await expect(t.store.ledger.topUp("acct_nobody", 1)).rejects.toThrow(expect.objectContaining({ code: "account_not_found" }));
      expect(await t.database.dump()).toEqual(before);
    });

    it("may bring the balance up to the largest safe amount and not one micro-euro past it", async () => {
      const t = await stores.open({ balanceMicro: 7 });
      expect((await t.store.ledger.topUp(t.accountId, MAX_MICROS - 7)).balanceMicro).toBe(MAX_MICROS);
      const before = await t.database.dump();
      await expect(t.store.ledger.topUp(t.accountId, 1)).rejects.toThrow(expect.objectContaining({ code: "invalid_input" }));
      expect(await t.database.dump()).toEqual(before);
      expect((await t.store.ledger.check()).ok).toBe(true);
    });
  });
});
