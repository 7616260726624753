import { afterEach, describe, expect, it } from "vitest";
import { periodContaining } from "../money/periods.js";
import { UnknownAccountError } from "../services/errors.js";
import { billingStores, expectedCharge, expectedRefusalMessage, holdFor, refusalOf, reservationRows } from "../testing/billing-store.js";
import { STORE_ENGINES } from "../testing/databases.js";

/**
 * Reserve, settle, release and sweep on a real store with a fake clock. Who pays and how much
 * is the billing service's policy, so those tests reserve through it; the once-only tests
 * exercise the store's mechanism with holds computed as the service computes them.
 */

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const stores = billingStores(engine);
  afterEach(() => stores.closeAll());

  async function setup(options: Parameters<typeof stores.open>[0] = {}) {
    const fixture = await stores.open(options);
    const request = (questions: number, inputTokens: number) => ({ questions, inputTokens, requestId: `req_${Math.random()}` });
    /** Through the billing service, as a request does: the hold, or a thrown InsufficientFundsError. */
    const held = async (questions: number, inputTokens: number) => fixture.billing.reserve(await fixture.payer(), request(questions, inputTokens));
    /** The store's mechanism alone: the outcome, never thrown. */
    const reserve = async (questions: number, inputTokens: number) =>
      fixture.store.billing.reserve(holdFor(await fixture.payer(), fixture.clock.now(), request(questions, inputTokens)));
    const usage = async () =>
      (await fixture.store.ledger.usage(fixture.accountId, periodContaining((await fixture.payer()).terms.createdAt, fixture.clock.now())))!;
    const entries = async () => (await fixture.store.ledger.entries(fixture.accountId, { limit: 500 })).reverse();
    const checked = async () => {
      const check = await fixture.store.ledger.check();
      expect(check, JSON.stringify(check)).toMatchObject({ ok: true, mismatches: [] });
    };
    return { ...fixture, held, reserve, usage, entries, checked };
  }

  describe("who pays", () => {
    it("a plan whose whole allowance is below Q is not tried: the balance pays and the period's usage is untouched", async () => {
      const t = await setup({ plan: { allowanceQuestions: 2, pricePerMillion: 1_000_000 }, balanceMicro: 1_000 });
      const payer = await t.payer();
      const r = await t.billing.reserve(payer, { questions: 3, inputTokens: 40, requestId: "req_big" });
      const raw = await t.database.raw();
      const usageRows = await raw.db.selectFrom("plan_usage").selectAll().execute();
      await raw.close();
      expect([r.billedTo, r.amountMicro, usageRows], JSON.stringify({ r, usageRows })).toEqual(["balance", 40, []]);
      // The key's terms said 2; a plan raised meanwhile applies from the next request, as its price does.
      await t.store.plans.update(t.planId, { allowanceQuestions: 100 });
      const stale = await t.billing.reserve(payer, { questions: 3, inputTokens: 40, requestId: "req_stale" });
      const fresh = await t.billing.reserve(await t.payer(), { questions: 3, inputTokens: 40, requestId: "req_fresh" });
      expect([stale.billedTo, fresh.billedTo], JSON.stringify({ stale, fresh })).toEqual(["balance", "plan"]);
      await t.checked();
    });

    it("the plan while Q questions of allowance remain, else the balance; a partial allowance is never split", async () => {
      const t = await setup({ plan: { allowanceQuestions: 5, pricePerMillion: 1_000_000 }, balanceMicro: 1_000 });
      const steps = [
        [2, 10],
        [2, 20],
        [2, 30], // only 1 question left: the balance pays
        [1, 40], // and that last question still goes to the plan
        [1, 50], // allowance used up: the balance
      ] as const;
      const billed = [];
      for (const [q, tokens] of steps) {
        const r = await t.held(q, tokens);
        const settled = await t.billing.settle(r);
        billed.push([r.billedTo, r.amountMicro, settled?.billedTo, settled?.standing]);
      }
      expect(billed, JSON.stringify(billed)).toEqual([
        ["plan", 0, "plan", { planUsed: 2, allowance: 5, balanceMicro: 1_000, heldMicro: 0 }],
        ["plan", 0, "plan", { planUsed: 4, allowance: 5, balanceMicro: 1_000, heldMicro: 0 }],
        ["balance", 30, "balance", { planUsed: 4, allowance: 5, balanceMicro: 970, heldMicro: 0 }],
        ["plan", 0, "plan", { planUsed: 5, allowance: 5, balanceMicro: 970, heldMicro: 0 }],
        ["balance", 50, "balance", { planUsed: 5, allowance: 5, balanceMicro: 920, heldMicro: 0 }],
      ]);
      const ledger = (await t.entries()).map((e) => [e.kind, e.amountMicro, e.questions, e.inputTokens]);
      expect(ledger, JSON.stringify(ledger)).toEqual([
        ["top_up", 1_000, 0, 0],
        ["plan", 0, 2, 10],
        ["plan", 0, 2, 20],
        ["charge", -30, 2, 30],
        ["plan", 0, 1, 40],
        ["charge", -50, 1, 50],
      ]);
      const usage = await t.usage();
      expect(usage, JSON.stringify(usage)).toMatchObject({ used: 5, reserved: 0, balanceMicro: 920, reservedMicro: 0 });
      await t.checked();
    });

    for (const [tokens, price] of [
      [7, 333_333],
      [3, 333_334],
      [1, 1],
      [1_000_000, 333_333],
      [2_999_999, 1_000_001],
      [123_457, 50_000],
    ] as const) {
      it(`${tokens} tokens at ${price} µ€ per million cost exactly ⌈tokens × price / 10⁶⌉ µ€ (${expectedCharge(tokens, price)})`, async () => {
        const t = await setup({ plan: { pricePerMillion: price }, balanceMicro: 10_000_000 });
        const r = await t.held(1, tokens);
        const charge = expectedCharge(tokens, price);
        expect(r, JSON.stringify(r)).toMatchObject({ billedTo: "balance", amountMicro: charge, inputTokens: tokens });
        expect((await t.usage()).reservedMicro).toBe(charge);
        await t.billing.settle(r);
        const usage = await t.usage();
        expect(usage, JSON.stringify(usage)).toMatchObject({ balanceMicro: 10_000_000 - charge, reservedMicro: 0 });
        const entries = await t.entries();
        expect(entries.at(-1), JSON.stringify(entries)).toMatchObject({ kind: "charge", amountMicro: -charge });
        await t.checked();
      });
    }

    it("a balance of exactly the charge pays; one micro-euro less, or money held by another request, does not", async () => {
      const price = 333_333;
      const charge = expectedCharge(100, price); // 34
      const exact = await setup({ plan: { pricePerMillion: price }, balanceMicro: charge });
      expect(await exact.held(1, 100), "balance equal to the charge").toMatchObject({ billedTo: "balance", amountMicro: charge });
      const short = await setup({ plan: { pricePerMillion: price }, balanceMicro: charge - 1 });
      const refused = await refusalOf(short.held(1, 100));
      expect(refused.standing, refused.message).toEqual({ planUsed: 0, allowance: 0, balanceMicro: charge - 1, heldMicro: 0 });
      expect(refused.message).toBe(expectedRefusalMessage({ questions: 1, chargeMicro: charge }, { left: 0, balanceMicro: charge - 1 }));
      const busy = await setup({ plan: { pricePerMillion: price }, balanceMicro: 2 * charge - 1 });
      const first = await busy.held(1, 100);
      const whileHeld = await refusalOf(busy.held(1, 100));
      expect(whileHeld.standing, `the first request holds half the balance: ${whileHeld.message}`).toEqual({
        planUsed: 0,
        allowance: 0,
        balanceMicro: 2 * charge - 1,
        heldMicro: charge,
      });
      expect(whileHeld.message).toBe(
        expectedRefusalMessage({ questions: 1, chargeMicro: charge }, { left: 0, balanceMicro: 2 * charge - 1, heldMicro: charge }),
      );
      await busy.billing.release(first.id);
      expect(await busy.held(1, 100), "released: it pays again").toMatchObject({ billedTo: "balance", amountMicro: charge });
    });
  });

  describe("402: a request nothing can pay changes nothing", () => {
    const cases = [
      ["no allowance and no balance", { allowanceQuestions: 0 }, 0, 1, { planUsed: 0, allowance: 0, balanceMicro: 0, heldMicro: 0 }],
      [
        "allowance one question short, balance one micro-euro short",
        { allowanceQuestions: 2 },
        99,
        2,
        { planUsed: 1, allowance: 2, balanceMicro: 99, heldMicro: 0 },
      ],
    ] as const;
    for (const [name, plan, balanceMicro, questions, standing] of cases) {
      it(`${name}: every table is unchanged`, async () => {
        const t = await setup({ plan: { ...plan, pricePerMillion: 1_000_000 }, balanceMicro });
        // Some history first, so there is something to disturb.
        if (plan.allowanceQuestions > 0) await t.billing.settle(await t.held(1, 5));
        const inFlight = await t.held(questions, 0); // a free request in flight: a row, holding 0 µ€
        expect(inFlight.billedTo).toBe("balance");
        const before = await t.database.dump();
        const refused = await refusalOf(t.held(questions, 100));
        expect(refused.standing, refused.message).toEqual(standing);
        expect(refused.message).toBe(expectedRefusalMessage({ questions, chargeMicro: 100 }, { left: standing.allowance - standing.planUsed, balanceMicro }));
        expect(await t.database.dump()).toEqual(before);
        await t.billing.settle(inFlight);
        await t.checked();
      });
    }

    it("an unknown account is refused without writing anything", async () => {
      const t = await setup();
      const before = await t.database.dump();
      const nobody = { ...(await t.payer()), accountId: "acct_nobody" };
      const outcome = await t.store.billing.reserve(holdFor(nobody, t.clock.now(), { questions: 1, inputTokens: 1, requestId: "r" }));
      expect(outcome).toEqual({ ok: false, reason: "account_not_found" });
      await expect(t.billing.reserve(nobody, { questions: 1, inputTokens: 1, requestId: "r" })).rejects.toBeInstanceOf(UnknownAccountError);
      expect(await t.database.dump()).toEqual(before);
    });
  });

  describe("settle, release and the sweeper each take a hold exactly once", () => {
    const balanceSetup = () => setup({ plan: { pricePerMillion: 1_000_000 }, balanceMicro: 1_000 });

    it("settle twice: one ledger entry, one debit", async () => {
      const t = await balanceSetup();
      const r = await t.held(1, 100);
      expect(await t.store.billing.settle(r)).toMatchObject({ billedTo: "balance", standing: { balanceMicro: 900 } });
      expect(await t.store.billing.settle(r)).toBeUndefined();
      expect(await t.store.billing.release(r.id), "release after settle").toBe(false);
      const entries = await t.entries();
      expect(
        entries.filter((e) => e.kind === "charge"),
        JSON.stringify(entries),
      ).toHaveLength(1);
      expect(await t.usage()).toMatchObject({ balanceMicro: 900, reservedMicro: 0 });
      await t.checked();
    });

    it("settle with a smaller actual charge takes that, and never more than the hold", async () => {
      const t = await balanceSetup();
      const small = await t.held(1, 100);
      const large = await t.held(1, 100);
      expect(await t.store.billing.settle(small, undefined, undefined, { inputTokens: 40, amountMicro: 40 })).toMatchObject({
        standing: { balanceMicro: 960 },
      });
      expect(await t.usage()).toMatchObject({ balanceMicro: 960, reservedMicro: 100 });
      expect(await t.store.billing.settle(large, undefined, undefined, { inputTokens: 500, amountMicro: 500 })).toMatchObject({
        standing: { balanceMicro: 860 },
      });
      expect(await t.usage()).toMatchObject({ balanceMicro: 860, reservedMicro: 0 });
      const charges = (await t.entries()).filter((e) => e.kind === "charge");
      expect(
        charges.map((e) => [e.amountMicro, e.inputTokens]),
        JSON.stringify(charges),
      ).toEqual([
        [-40, 40],
        [-100, 100],
      ]);
      await t.checked();
    });

    it("release, then settle or release again: nothing charged, the hold given back once", async () => {
      const t = await balanceSetup();
      const r = await t.held(1, 100);
      const other = await t.held(1, 200);
      expect((await t.usage()).reservedMicro).toBe(300);
      expect(await t.store.billing.release(r.id)).toBe(true);
      expect(await t.store.billing.release(r.id), "second release").toBe(false);
      expect(await t.store.billing.settle(r), "settle after release").toBeUndefined();
      expect(await t.usage(), "only the other request's hold remains").toMatchObject({ balanceMicro: 1_000, reservedMicro: 200 });
      expect((await t.entries()).map((e) => e.kind)).toEqual(["top_up"]);
      await t.store.billing.settle(other);
      await t.checked();
    });

    it("plan holds too: released questions return to the allowance, settled ones are used once", async () => {
      const t = await setup({ plan: { allowanceQuestions: 3 } });
      const a = await t.reserve(2, 1);
      if (!a.ok) throw new Error(JSON.stringify(a));
      expect(await t.usage()).toMatchObject({ used: 0, reserved: 2 });
      expect(await t.reserve(2, 1), "2 of 3 held").toMatchObject({ ok: false, reason: "insufficient_funds" });
      await t.store.billing.release(a.reservation.id);
      const b = await t.reserve(3, 1);
      if (!b.ok) throw new Error(JSON.stringify(b));
      await t.store.billing.settle(b.reservation);
      await t.store.billing.settle(b.reservation);
      await t.store.billing.release(b.reservation.id);
      expect(await t.usage()).toMatchObject({ used: 3, reserved: 0 });
      await t.checked();
    });

    it("the sweeper releases an expired hold, after which settle finds nothing to charge", async () => {
      const t = await setup({ plan: { pricePerMillion: 1_000_000 }, balanceMicro: 1_000, reservationTtlMs: 30_000 });
      const r = await t.held(1, 100);
      expect(r.expiresAt).toBe(t.clock.now() + 30_000);
      t.clock.advance(30_000);
      expect(await t.store.billing.sweep()).toMatchObject({ reservations: 1 });
      expect(await t.store.billing.settle(r)).toBeUndefined();
      expect(await t.store.billing.release(r.id)).toBe(false);
      expect(await t.usage()).toMatchObject({ balanceMicro: 1_000, reservedMicro: 0 });
      expect((await t.entries()).map((e) => e.kind)).toEqual(["top_up"]);
      await t.checked();
    });

    it("a hold settled before it expires is not touched by a later sweep", async () => {
      const t = await setup({ plan: { pricePerMillion: 1_000_000 }, balanceMicro: 1_000, reservationTtlMs: 30_000 });
      const r = await t.held(1, 100);
      t.clock.advance(29_999);
      await t.store.billing.settle(r);
      t.clock.advance(10 * 60_000);
      expect(await t.store.billing.sweep()).toMatchObject({ reservations: 0 });
      expect(await t.usage()).toMatchObject({ balanceMicro: 900, reservedMicro: 0 });
      await t.checked();
    });

    it("sweep releases only holds whose expiry has come, to the millisecond", async () => {
      const t = await setup({ plan: { allowanceQuestions: 10, pricePerMillion: 1_000_000 }, balanceMicro: 1_000, reservationTtlMs: 60_000 });
      const early = await t.held(1, 10); // plan
      t.clock.advance(10_000);
      const late = await t.held(10, 100); // balance: only 9 questions left
      expect([early.billedTo, late.billedTo]).toEqual(["plan", "balance"]);
      t.clock.advance(49_999); // early expires at +60 000, it is now +59 999
      expect((await t.store.billing.sweep()).reservations, "nothing has expired yet").toBe(0);
      t.clock.advance(1);
      expect((await t.store.billing.sweep()).reservations, "exactly at its expiry").toBe(1);
      expect((await reservationRows(t.database)).map((row) => row.id)).toEqual([late.id]);
      expect(await t.usage()).toMatchObject({ reserved: 0, reservedMicro: 100 });
      t.clock.advance(9_999);
      expect((await t.store.billing.sweep()).reservations).toBe(0);
      t.clock.advance(1);
      expect((await t.store.billing.sweep()).reservations).toBe(1);
      expect(await t.usage()).toMatchObject({ used: 0, reserved: 0, balanceMicro: 1_000, reservedMicro: 0 });
      await t.checked();
    });
  });
});
