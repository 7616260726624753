import { afterEach, describe, expect, it } from "vitest";
import { dumpTables, expectedCharge, openBillingStore, reservationRows, type BillingFixture } from "../testing/billing-store.js";
import { useTempDir } from "./test-helpers.js";
import type { Reservation } from "./types.js";

/** Reserve, settle, release and sweep on a real file-backed store with a fake clock. */

const temp = useTempDir();
const open: BillingFixture[] = [];
afterEach(() => {
  for (const fixture of open.splice(0)) fixture.store.close();
  temp.cleanup();
});

function setup(options: Parameters<typeof openBillingStore>[1] = {}) {
  const fixture = openBillingStore(temp.dir(), options);
  open.push(fixture);
  const reserve = (questions: number, inputTokens: number, requestId = `req_${Math.random()}`) =>
    fixture.store.billing.reserve({ accountId: fixture.accountId, questions, inputTokens, requestId });
  const held = (questions: number, inputTokens: number): Reservation => {
    const outcome = reserve(questions, inputTokens);
    if (!outcome.ok) throw new Error(`expected a hold, got ${JSON.stringify(outcome)}`);
    return outcome.reservation;
  };
  const usage = () => fixture.store.ledger.usage(fixture.accountId)!;
  const entries = () => fixture.store.ledger.entries(fixture.accountId, { limit: 500 }).reverse();
  const checked = () => {
    const check = fixture.store.ledger.check();
    expect(check, JSON.stringify(check)).toMatchObject({ ok: true, mismatches: [] });
  };
  return { ...fixture, reserve, held, usage, entries, checked };
}

describe("who pays", () => {
  it("the plan while Q questions of allowance remain, else the balance; a partial allowance is never split", () => {
    const t = setup({ plan: { allowanceQuestions: 5, pricePerMillion: 1_000_000 }, balanceMicro: 1_000 });
    const steps = [
      [2, 10],
      [2, 20],
      [2, 30], // only 1 question left: the balance pays
      [1, 40], // and that last question still goes to the plan
      [1, 50], // allowance used up: the balance
    ] as const;
    const billed = steps.map(([q, tokens]) => {
      const r = t.held(q, tokens);
      const settled = t.store.billing.settle(r);
      return [r.billedTo, r.amountMicro, settled?.billedTo, settled?.standing];
    });
    expect(billed, JSON.stringify(billed)).toEqual([
      ["plan", 0, "plan", { planUsed: 2, allowance: 5, balanceMicro: 1_000, heldMicro: 0 }],
      ["plan", 0, "plan", { planUsed: 4, allowance: 5, balanceMicro: 1_000, heldMicro: 0 }],
      ["balance", 30, "balance", { planUsed: 4, allowance: 5, balanceMicro: 970, heldMicro: 0 }],
      ["plan", 0, "plan", { planUsed: 5, allowance: 5, balanceMicro: 970, heldMicro: 0 }],
      ["balance", 50, "balance", { planUsed: 5, allowance: 5, balanceMicro: 920, heldMicro: 0 }],
    ]);
    const ledger = t.entries().map((e) => [e.kind, e.amountMicro, e.questions, e.inputTokens]);
    expect(ledger, JSON.stringify(ledger)).toEqual([
      ["top_up", 1_000, 0, 0],
      ["plan", 0, 2, 10],
      ["plan", 0, 2, 20],
      ["charge", -30, 2, 30],
      ["plan", 0, 1, 40],
      ["charge", -50, 1, 50],
    ]);
    expect(t.usage(), JSON.stringify(t.usage())).toMatchObject({ used: 5, reserved: 0, balanceMicro: 920, reservedMicro: 0 });
    t.checked();
  });

  for (const [tokens, price] of [
    [7, 333_333],
    [3, 333_334],
    [1, 1],
    [1_000_000, 333_333],
    [2_999_999, 1_000_001],
    [123_457, 50_000],
  ] as const) {
    it(`${tokens} tokens at ${price} µ€ per million cost exactly ⌈tokens × price / 10⁶⌉ µ€ (${expectedCharge(tokens, price)})`, () => {
      const t = setup({ plan: { pricePerMillion: price }, balanceMicro: 10_000_000 });
      const r = t.held(1, tokens);
      const charge = expectedCharge(tokens, price);
      expect(r, JSON.stringify(r)).toMatchObject({ billedTo: "balance", amountMicro: charge, inputTokens: tokens });
      expect(t.usage().reservedMicro).toBe(charge);
      t.store.billing.settle(r);
      expect(t.usage(), JSON.stringify(t.usage())).toMatchObject({ balanceMicro: 10_000_000 - charge, reservedMicro: 0 });
      expect(t.entries().at(-1), JSON.stringify(t.entries())).toMatchObject({ kind: "charge", amountMicro: -charge });
      t.checked();
    });
  }

  it("a balance of exactly the charge pays; one micro-euro less, or money held by another request, does not", () => {
    const price = 333_333;
    const charge = expectedCharge(100, price); // 34
    const exact = setup({ plan: { pricePerMillion: price }, balanceMicro: charge, file: "exact.db" });
    expect(exact.reserve(1, 100), "balance equal to the charge").toMatchObject({ ok: true });
    const short = setup({ plan: { pricePerMillion: price }, balanceMicro: charge - 1, file: "short.db" });
    expect(short.reserve(1, 100)).toEqual({
      ok: false,
      reason: "insufficient_funds",
      chargeMicro: charge,
      standing: { planUsed: 0, allowance: 0, balanceMicro: charge - 1, heldMicro: 0 },
    });
    const busy = setup({ plan: { pricePerMillion: price }, balanceMicro: 2 * charge - 1, file: "busy.db" });
    const first = busy.held(1, 100);
    expect(busy.reserve(1, 100), "the first request holds half the balance").toMatchObject({ ok: false, reason: "insufficient_funds" });
    busy.store.billing.release(first.id);
    expect(busy.reserve(1, 100), "released: it pays again").toMatchObject({ ok: true });
  });
});

describe("402: a request nothing can pay changes nothing", () => {
  const cases = [
    ["no allowance and no balance", { allowanceQuestions: 0 }, 0, 1],
    ["allowance one question short, balance one micro-euro short", { allowanceQuestions: 2 }, 99, 2],
  ] as const;
  for (const [name, plan, balanceMicro, questions] of cases) {
    it(`${name}: every table is unchanged`, () => {
      const t = setup({ plan: { ...plan, pricePerMillion: 1_000_000 }, balanceMicro });
      // Some history first, so there is something to disturb.
      if (plan.allowanceQuestions > 0) t.store.billing.settle(t.held(1, 5));
      const inFlight = t.held(questions, 0); // a free request in flight: a row, holding 0 µ€
      expect(inFlight.billedTo).toBe("balance");
      const before = dumpTables(t.path);
      const outcome = t.reserve(questions, 100);
      expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: false, reason: "insufficient_funds", chargeMicro: 100 });
      expect(dumpTables(t.path)).toEqual(before);
      t.store.billing.settle(inFlight);
      t.checked();
    });
  }

  it("an unknown account is refused without writing anything", () => {
    const t = setup();
    const before = dumpTables(t.path);
    const outcome = t.store.billing.reserve({ accountId: "acct_nobody", questions: 1, inputTokens: 1, requestId: "r" });
    expect(outcome).toEqual({ ok: false, reason: "account_not_found" });
    expect(dumpTables(t.path)).toEqual(before);
  });
});

describe("settle, release and the sweeper each take a hold exactly once", () => {
  const balanceSetup = () => setup({ plan: { pricePerMillion: 1_000_000 }, balanceMicro: 1_000 });

  it("settle twice: one ledger entry, one debit", () => {
    const t = balanceSetup();
    const r = t.held(1, 100);
    expect(t.store.billing.settle(r)).toMatchObject({ billedTo: "balance", standing: { balanceMicro: 900 } });
    expect(t.store.billing.settle(r)).toBeUndefined();
    expect(t.store.billing.release(r.id), "release after settle").toBe(false);
    expect(t.entries().filter((e) => e.kind === "charge"), JSON.stringify(t.entries())).toHaveLength(1);
    expect(t.usage()).toMatchObject({ balanceMicro: 900, reservedMicro: 0 });
    t.checked();
  });

  it("release, then settle or release again: nothing charged, the hold given back once", () => {
    const t = balanceSetup();
    const r = t.held(1, 100);
    const other = t.held(1, 200);
    expect(t.usage().reservedMicro).toBe(300);
    expect(t.store.billing.release(r.id)).toBe(true);
    expect(t.store.billing.release(r.id), "second release").toBe(false);
    expect(t.store.billing.settle(r), "settle after release").toBeUndefined();
    expect(t.usage(), "only the other request's hold remains").toMatchObject({ balanceMicro: 1_000, reservedMicro: 200 });
    expect(t.entries().map((e) => e.kind)).toEqual(["top_up"]);
    t.store.billing.settle(other);
    t.checked();
  });

  it("plan holds too: released questions return to the allowance, settled ones are used once", () => {
    const t = setup({ plan: { allowanceQuestions: 3 } });
    const a = t.held(2, 1);
    expect(t.usage()).toMatchObject({ used: 0, reserved: 2 });
    expect(t.reserve(2, 1), "2 of 3 held").toMatchObject({ ok: false });
    t.store.billing.release(a.id);
    const b = t.held(3, 1);
    t.store.billing.settle(b);
    t.store.billing.settle(b);
    t.store.billing.release(b.id);
    expect(t.usage()).toMatchObject({ used: 3, reserved: 0 });
    t.checked();
  });

  it("the sweeper releases an expired hold, after which settle finds nothing to charge", () => {
    const t = setup({ plan: { pricePerMillion: 1_000_000 }, balanceMicro: 1_000, reservationTtlMs: 30_000 });
    const r = t.held(1, 100);
    expect(r.expiresAt).toBe(t.clock.now() + 30_000);
    t.clock.advance(30_000);
    expect(t.store.billing.sweep()).toMatchObject({ reservations: 1 });
    expect(t.store.billing.settle(r)).toBeUndefined();
    expect(t.store.billing.release(r.id)).toBe(false);
    expect(t.usage()).toMatchObject({ balanceMicro: 1_000, reservedMicro: 0 });
    expect(t.entries().map((e) => e.kind)).toEqual(["top_up"]);
    t.checked();
  });

  it("a hold settled before it expires is not touched by a later sweep", () => {
    const t = setup({ plan: { pricePerMillion: 1_000_000 }, balanceMicro: 1_000, reservationTtlMs: 30_000 });
    const r = t.held(1, 100);
    t.clock.advance(29_999);
    t.store.billing.settle(r);
    t.clock.advance(10 * 60_000);
    expect(t.store.billing.sweep()).toMatchObject({ reservations: 0 });
    expect(t.usage()).toMatchObject({ balanceMicro: 900, reservedMicro: 0 });
    t.checked();
  });

  it("sweep releases only holds whose expiry has come, to the millisecond", () => {
    const t = setup({ plan: { allowanceQuestions: 10, pricePerMillion: 1_000_000 }, balanceMicro: 1_000, reservationTtlMs: 60_000 });
    const early = t.held(1, 10); // plan
    t.clock.advance(10_000);
    const late = t.held(10, 100); // balance: only 9 questions left
    expect([early.billedTo, late.billedTo]).toEqual(["plan", "balance"]);
    t.clock.advance(49_999); // early expires at +60 000, it is now +59 999
    expect(t.store.billing.sweep().reservations, "nothing has expired yet").toBe(0);
    t.clock.advance(1);
    expect(t.store.billing.sweep().reservations, "exactly at its expiry").toBe(1);
    expect(reservationRows(t.path).map((row) => row.id)).toEqual([late.id]);
    expect(t.usage()).toMatchObject({ reserved: 0, reservedMicro: 100 });
    t.clock.advance(9_999);
    expect(t.store.billing.sweep().reservations).toBe(0);
    t.clock.advance(1);
    expect(t.store.billing.sweep().reservations).toBe(1);
    expect(t.usage()).toMatchObject({ used: 0, reserved: 0, balanceMicro: 1_000, reservedMicro: 0 });
    t.checked();
  });
});
