import { afterEach, describe, expect, it } from "vitest";
import { createAccountsService } from "../services/accounts.js";
import { InsufficientFundsError } from "../services/errors.js";
import { billingStores, JAN_31, payerOf } from "../testing/billing-store.js";
import { STORE_ENGINES } from "../testing/databases.js";

/**
 * Plans: edits apply to the next reservation; allowance periods roll over at the account's
 * anniversary. Each request reads its account's terms afresh, as authentication does.
 */

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const stores = billingStores(engine);
  afterEach(() => stores.closeAll());

  async function setup(options: Parameters<typeof stores.open>[0] = {}) {
    const fixture = await stores.open(options);
    const accounts = createAccountsService(fixture.store, fixture.clock.now);
    const reserve = async (questions: number, inputTokens = 100) =>
      fixture.billing.reserve(await fixture.payer(), { questions, inputTokens, requestId: "req_test" });
    /** Reserve and settle: who paid and how much, or "insufficient_funds". */
    const spend = async (questions: number, inputTokens = 100) => {
      let reservation;
      try {
        reservation = await reserve(questions, inputTokens);
      } catch (error) {
        if (error instanceof InsufficientFundsError) return "insufficient_funds";
        throw error;
      }
      await fixture.billing.settle(reservation);
      return `${reservation.billedTo} ${reservation.amountMicro}`;
    };
    const checked = async () => {
      const check = await fixture.store.ledger.check();
      expect(check, JSON.stringify(check)).toMatchObject({ ok: true });
    };
    /** This period's usage of an account, by the services' clock. */
    const usageOf = async (accountId: string) => (await accounts.summary(accountId))!.usage;
    return { ...fixture, reserve, spend, checked, usageOf, usage: () => usageOf(fixture.accountId) };
  }

  describe("plan edits apply to the next reservation", () => {
    it("a smaller or larger allowance decides the very next request; holds already taken keep theirs", async () => {
      const t = await setup({ plan: { allowanceQuestions: 4, pricePerMillion: 1_000_000 }, balanceMicro: 10_000 });
      const held = await t.reserve(2);
      expect(held).toMatchObject({ billedTo: "plan" });
      await t.store.plans.update(t.planId, { allowanceQuestions: 2 });
      expect(await t.spend(1), "allowance cut to the 2 already held").toBe("balance 100");
      await t.store.plans.update(t.planId, { allowanceQuestions: 3 });
      expect(await t.spend(1)).toBe("plan 0");
      expect(await t.spend(1)).toBe("balance 100");
      await t.billing.settle(held);
      expect(await t.usage()).toMatchObject({ used: 3, reserved: 0, allowance: 3, balanceMicro: 9_800 });
      await t.checked();
    });

    it("a new price applies to the next balance request; a hold keeps the price it was taken at", async () => {
      const t = await setup({ plan: { pricePerMillion: 1_000_000 }, balanceMicro: 10_000 });
      const held = await t.reserve(1, 100);
      await t.store.plans.update(t.planId, { pricePerMillion: 3_000_000 });
      expect(await t.spend(1, 100)).toBe("balance 300");
      expect(await t.billing.settle(held)).toMatchObject({ standing: { balanceMicro: 10_000 - 300 - 100 } });
      await t.checked();
    });

    it("moving the account to another plan changes who pays for the next request", async () => {
      const t = await setup({ plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 1_000 });
      expect(await t.spend(1)).toBe("balance 100");
      const generous = await t.store.plans.create({ name: "generous", requestsPerMinute: 5, allowanceQuestions: 10, pricePerMillion: 1 });
      await t.store.accounts.setPlan(t.accountId, generous.id);
      expect(await t.spend(1)).toBe("plan 0");
      expect(await t.usage()).toMatchObject({ used: 1, allowance: 10, balanceMicro: 900 });
      await t.checked();
    });

    it("refuses plan values outside their bounds and keeps the plan as it was", async () => {
      const t = await setup({ plan: { allowanceQuestions: 7 } });
      const before = await t.store.plans.get(t.planId);
      for (const changes of [
        { requestsPerMinute: 0 },
        { allowanceQuestions: -1 },
        { pricePerMillion: 1.5 },
        { pricePerMillion: 1_000_000_000_001 },
        { allowanceQuestions: Number.NaN },
      ]) {
        await expect(t.store.plans.update(t.planId, changes), JSON.stringify(changes)).rejects.toThrow(expect.objectContaining({ code: "invalid_input" }));
      }
      expect(await t.store.plans.get(t.planId)).toEqual(before);
    });
  });

  describe("looking a plan up by id or name", () => {
    const terms = { requestsPerMinute: 5, allowanceQuestions: 1, pricePerMillion: 1 };

    it("an id always means that plan, even when an older plan is named like it (a name from before names were checked)", async () => {
      const t = await setup();
      t.clock.advance(1_000);
      const newer = await t.store.plans.create({ name: "newer", ...terms });
      // Written behind the store's back (the store no longer accepts such names): the older plan takes the newer one's id as its name.
      const raw = await t.database.raw();
      await raw.db.updateTable("plans").set({ name: newer.id }).where("id", "=", t.planId).execute();
      expect((await t.store.plans.get(newer.id))?.id, "by id, not the older plan that has it as its name").toBe(newer.id);
      const updated = await t.store.plans.update(newer.id, { allowanceQuestions: 42 });
      expect(updated.id, JSON.stringify(updated)).toBe(newer.id);
      expect((await t.store.plans.get(t.planId))?.allowanceQuestions, "the plan named like the id is untouched").toBe(0);
      const account = await t.store.accounts.create({ name: "lands on the id's plan", plan: newer.id });
      expect(account.planId).toBe(newer.id);
      // The name still finds its plan when no plan has it as an id.
      expect((await t.store.plans.get("newer"))?.id).toBe(newer.id);
    });

    it("the built-in default plan stays the one its id plan_default names, whatever other plans are called", async () => {
      const t = await setup();
      const named = await t.store.plans.create({ name: "plan default", ...terms });
      expect((await t.store.plans.get("plan_default"))?.name).toBe("default");
      expect((await t.store.plans.get("default"))?.id).toBe("plan_default");
      expect((await t.store.plans.get("plan default"))?.id).toBe(named.id);
      const account = await t.store.accounts.create({ name: "default account", plan: "plan_default" });
      expect(account.planId).toBe("plan_default");
    });

    it("refuses to create or rename a plan to a name shaped like an id, and changes nothing", async () => {
      const t = await setup();
      const before = await t.store.plans.list();
      for (const name of ["plan_default", "plan_4f9QzX0aB1c2D3e4", "  plan_pro  "]) {
        await expect(t.store.plans.create({ name, ...terms }), name).rejects.toThrow(
          expect.objectContaining({ code: "invalid_input", message: expect.stringMatching(/looks like a plan id/) }),
        );
        await expect(t.store.plans.update(t.planId, { name }), name).rejects.toThrow(expect.objectContaining({ code: "invalid_input" }));
      }
      expect(await t.store.plans.list()).toEqual(before);
      // Names that merely start alike are names: they have a space, a dash or a second underscore.
      for (const name of ["plan pro", "plan-pro", "plan_for_startups", "Plan_pro"]) {
        expect((await t.store.plans.create({ name, ...terms })).name).toBe(name);
      }
    });

    it("keeps an id-shaped name a plan already had when other fields change", async () => {
      const t = await setup();
      const legacy = await t.store.plans.create({ name: "legacy", ...terms });
      const raw = await t.database.raw();
      await raw.db.updateTable("plans").set({ name: "plan_legacy" }).where("id", "=", legacy.id).execute();
      expect((await t.store.plans.update("plan_legacy", { allowanceQuestions: 9 })).allowanceQuestions).toBe(9);
      expect((await t.store.plans.update(legacy.id, { name: "legacy again" })).name).toBe("legacy again");
    });
  });

  describe("allowance periods", () => {
    // Created 31 January 10:00 UTC: periods start 28 February 10:00, 31 March 10:00, 30 April 10:00.
    const FEB_28 = Date.UTC(2026, 1, 28, 10, 0, 0, 0);
    const MAR_31 = Date.UTC(2026, 2, 31, 10, 0, 0, 0);

    it("roll over at the account's monthly anniversary to the millisecond, the day clamped to the month", async () => {
      const t = await setup({ start: JAN_31, plan: { allowanceQuestions: 2 } });
      expect((await t.usage()).period).toEqual({ start: JAN_31, end: FEB_28 });
      expect(await t.spend(2)).toBe("plan 0");
      expect(await t.spend(1)).toBe("insufficient_funds");
      t.clock.advance(FEB_28 - 1 - t.clock.now());
      expect(await t.spend(1), "one millisecond before the boundary").toBe("insufficient_funds");
      expect(await t.usage()).toMatchObject({ period: { start: JAN_31, end: FEB_28 }, used: 2 });
      t.clock.advance(1);
      expect(await t.usage()).toMatchObject({ period: { start: FEB_28, end: MAR_31 }, used: 0 });
      expect(await t.spend(1), "exactly at the boundary").toBe("plan 0");
      expect(await t.billing.standing(await t.payer())).toEqual({ planUsed: 1, allowance: 2, balanceMicro: 0, heldMicro: 0 });
      t.clock.advance(MAR_31 - 1 - t.clock.now());
      expect(await t.spend(1)).toBe("plan 0");
      expect(await t.spend(1)).toBe("insufficient_funds");
      t.clock.advance(1);
      expect(await t.usage()).toMatchObject({ period: { start: MAR_31, end: Date.UTC(2026, 3, 30, 10) }, used: 0 });
      await t.checked();
    });

    it("are anchored on each account's own creation time", async () => {
      const t = await setup({ start: JAN_31, plan: { allowanceQuestions: 1 } });
      t.clock.advance(12 * 3_600_000 + 345); // a second account created 12 h 345 ms later
      const later = await t.store.accounts.create({ name: "later", plan: t.planId });
      t.clock.advance(FEB_28 - t.clock.now());
      expect((await t.usageOf(t.accountId)).period.start).toBe(FEB_28);
      expect((await t.usageOf(later.id)).period).toEqual({ start: later.createdAt, end: FEB_28 + 12 * 3_600_000 + 345 });
      // And the billing service counts a request in that same period.
      const held = await t.billing.reserve(await payerOf(t.store, later.id), { questions: 1, inputTokens: 1, requestId: "req_later" });
      expect(held).toMatchObject({ billedTo: "plan", periodStart: later.createdAt });
    });

    it("a request held before the boundary and settled after it counts in, and reports, the period it was held in", async () => {
      const t = await setup({ start: JAN_31, plan: { allowanceQuestions: 3 }, reservationTtlMs: 600_000 });
      t.clock.advance(FEB_28 - 1_000 - t.clock.now());
      const held = await t.reserve(3);
      expect(held.periodStart).toBe(JAN_31);
      t.clock.advance(2_000);
      // The standing it reports is of the period that paid (all 3 of January's 3), not February's untouched one.
      expect(await t.billing.settle(held)).toMatchObject({ billedTo: "plan", standing: { planUsed: 3, allowance: 3 } });
      expect(await t.usage(), "the new period starts empty").toMatchObject({ period: { start: FEB_28 }, used: 0, reserved: 0 });
      expect(await t.spend(3)).toBe("plan 0");
      const plans = (await t.store.ledger.entries(t.accountId)).map((e) => [e.kind, e.questions, e.periodStart]);
      expect(plans).toEqual([
        ["plan", 3, FEB_28],
        ["plan", 3, JAN_31],
      ]);
      await t.checked();
    });

    it("each request settled after the boundary reports the period it was billed to, on the plan or the balance", async () => {
      const t = await setup({ start: JAN_31, plan: { allowanceQuestions: 4, pricePerMillion: 1_000_000 }, balanceMicro: 10_000, reservationTtlMs: 600_000 });
      expect(await t.spend(1)).toBe("plan 0");
      t.clock.advance(FEB_28 - 1_000 - t.clock.now());
      const onPlan = await t.reserve(2);
      const onBalance = await t.reserve(4, 100); // January has 1 of 4 left: the balance pays
      expect([onPlan.billedTo, onBalance.billedTo, onPlan.periodStart, onBalance.periodStart]).toEqual(["plan", "balance", JAN_31, JAN_31]);
      t.clock.advance(2_000);
      const february = await t.reserve(1);
      expect(february).toMatchObject({ billedTo: "plan", periodStart: FEB_28 });

      const settled = [await t.billing.settle(onPlan), await t.billing.settle(onBalance), await t.billing.settle(february)];
      expect(settled, JSON.stringify(settled)).toEqual([
        { billedTo: "plan", standing: { planUsed: 3, allowance: 4, balanceMicro: 10_000, heldMicro: 100 } },
        { billedTo: "balance", standing: { planUsed: 3, allowance: 4, balanceMicro: 9_900, heldMicro: 0 } },
        { billedTo: "plan", standing: { planUsed: 1, allowance: 4, balanceMicro: 9_900, heldMicro: 0 } },
      ]);
      await t.checked();
    });
  });
});
