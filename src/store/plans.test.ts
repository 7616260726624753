import { afterEach, describe, expect, it } from "vitest";
import { JAN_31, openBillingStore, type BillingFixture } from "../testing/billing-store.js";
import { useTempDir } from "./test-helpers.js";

/** Plans: edits apply to the next reservation; allowance periods roll over at the account's anniversary. */

const temp = useTempDir();
const open: BillingFixture[] = [];
afterEach(() => {
  for (const fixture of open.splice(0)) fixture.store.close();
  temp.cleanup();
});

function setup(options: Parameters<typeof openBillingStore>[1] = {}) {
  const fixture = openBillingStore(temp.dir(), options);
  open.push(fixture);
  const reserve = (questions: number, inputTokens = 100) =>
    fixture.store.billing.reserve({ accountId: fixture.accountId, questions, inputTokens, requestId: "req_test" });
  const spend = (questions: number, inputTokens = 100) => {
    const outcome = reserve(questions, inputTokens);
    if (!outcome.ok) return outcome.reason;
    fixture.store.billing.settle(outcome.reservation);
    return `${outcome.reservation.billedTo} ${outcome.reservation.amountMicro}`;
  };
  const checked = () => {
    const check = fixture.store.ledger.check();
    expect(check, JSON.stringify(check)).toMatchObject({ ok: true });
  };
  return { ...fixture, reserve, spend, checked, usage: () => fixture.store.ledger.usage(fixture.accountId)! };
}

describe("plan edits apply to the next reservation", () => {
  it("a smaller or larger allowance decides the very next request; holds already taken keep theirs", () => {
    const t = setup({ plan: { allowanceQuestions: 4, pricePerMillion: 1_000_000 }, balanceMicro: 10_000 });
    const held = t.reserve(2);
    expect(held).toMatchObject({ ok: true, reservation: { billedTo: "plan" } });
    t.store.plans.update(t.planId, { allowanceQuestions: 2 });
    expect(t.spend(1), "allowance cut to the 2 already held").toBe("balance 100");
    t.store.plans.update(t.planId, { allowanceQuestions: 3 });
    expect(t.spend(1)).toBe("plan 0");
    expect(t.spend(1)).toBe("balance 100");
    if (held.ok) t.store.billing.settle(held.reservation);
    expect(t.usage()).toMatchObject({ used: 3, reserved: 0, allowance: 3, balanceMicro: 9_800 });
    t.checked();
  });

  it("a new price applies to the next balance request; a hold keeps the price it was taken at", () => {
    const t = setup({ plan: { pricePerMillion: 1_000_000 }, balanceMicro: 10_000 });
    const held = t.reserve(1, 100);
    t.store.plans.update(t.planId, { pricePerMillion: 3_000_000 });
    expect(t.spend(1, 100)).toBe("balance 300");
    if (!held.ok) throw new Error(JSON.stringify(held));
    expect(t.store.billing.settle(held.reservation)).toMatchObject({ standing: { balanceMicro: 10_000 - 300 - 100 } });
    t.checked();
  });

  it("moving the account to another plan changes who pays for the next request", () => {
    const t = setup({ plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 1_000 });
    expect(t.spend(1)).toBe("balance 100");
    const generous = t.store.plans.create({ name: "generous", requestsPerMinute: 5, allowanceQuestions: 10, pricePerMillion: 1 });
    t.store.accounts.setPlan(t.accountId, generous.id);
    expect(t.spend(1)).toBe("plan 0");
    expect(t.usage()).toMatchObject({ used: 1, allowance: 10, balanceMicro: 900 });
    t.checked();
  });

  it("refuses plan values outside their bounds and keeps the plan as it was", () => {
    const t = setup({ plan: { allowanceQuestions: 7 } });
    const before = t.store.plans.get(t.planId);
    for (const changes of [
      { requestsPerMinute: 0 },
      { allowanceQuestions: -1 },
      { pricePerMillion: 1.5 },
      { pricePerMillion: 1_000_000_000_001 },
      { allowanceQuestions: Number.NaN },
    ]) {
      expect(() => t.store.plans.update(t.planId, changes), JSON.stringify(changes)).toThrow(
        expect.objectContaining({ code: "invalid_input" }),
      );
    }
    expect(t.store.plans.get(t.planId)).toEqual(before);
  });
});

describe("allowance periods", () => {
  // Created 31 January 10:00 UTC: periods start 28 February 10:00, 31 March 10:00, 30 April 10:00.
  const FEB_28 = Date.UTC(2026, 1, 28, 10, 0, 0, 0);
  const MAR_31 = Date.UTC(2026, 2, 31, 10, 0, 0, 0);

  it("roll over at the account's monthly anniversary to the millisecond, the day clamped to the month", () => {
    const t = setup({ start: JAN_31, plan: { allowanceQuestions: 2 } });
    expect(t.usage().period).toEqual({ start: JAN_31, end: FEB_28 });
    expect(t.spend(2)).toBe("plan 0");
    expect(t.spend(1)).toBe("insufficient_funds");
    t.clock.advance(FEB_28 - 1 - t.clock.now());
    expect(t.spend(1), "one millisecond before the boundary").toBe("insufficient_funds");
    expect(t.usage()).toMatchObject({ period: { start: JAN_31, end: FEB_28 }, used: 2 });
    t.clock.advance(1);
    expect(t.usage()).toMatchObject({ period: { start: FEB_28, end: MAR_31 }, used: 0 });
    expect(t.spend(1), "exactly at the boundary").toBe("plan 0");
    expect(t.store.billing.standing(t.accountId)).toEqual({ planUsed: 1, allowance: 2, balanceMicro: 0, heldMicro: 0 });
    t.clock.advance(MAR_31 - 1 - t.clock.now());
    expect(t.spend(1)).toBe("plan 0");
    expect(t.spend(1)).toBe("insufficient_funds");
    t.clock.advance(1);
    expect(t.usage()).toMatchObject({ period: { start: MAR_31, end: Date.UTC(2026, 3, 30, 10) }, used: 0 });
    t.checked();
  });

  it("are anchored on each account's own creation time", () => {
    const t = setup({ start: JAN_31, plan: { allowanceQuestions: 1 } });
    t.clock.advance(12 * 3_600_000 + 345); // a second account created 12 h 345 ms later
    const later = t.store.accounts.create({ name: "later", plan: t.planId });
    t.clock.advance(FEB_28 - t.clock.now());
    const usageOf = (id: string) => t.store.ledger.usage(id)!.period;
    expect(usageOf(t.accountId).start).toBe(FEB_28);
    expect(usageOf(later.id)).toEqual({ start: later.createdAt, end: FEB_28 + 12 * 3_600_000 + 345 });
  });

  it("a request held before the boundary and settled after it counts in the period it was held in", () => {
    const t = setup({ start: JAN_31, plan: { allowanceQuestions: 3 }, reservationTtlMs: 600_000 });
    t.clock.advance(FEB_28 - 1_000 - t.clock.now());
    const held = t.reserve(3);
    if (!held.ok) throw new Error(JSON.stringify(held));
    expect(held.reservation.periodStart).toBe(JAN_31);
    t.clock.advance(2_000);
    expect(t.store.billing.settle(held.reservation)).toMatchObject({ billedTo: "plan", standing: { planUsed: 0, allowance: 3 } });
    expect(t.usage(), "the new period starts empty").toMatchObject({ period: { start: FEB_28 }, used: 0, reserved: 0 });
    expect(t.spend(3)).toBe("plan 0");
    const plans = t.store.ledger.entries(t.accountId).map((e) => [e.kind, e.questions, e.periodStart]);
    expect(plans).toEqual([
      ["plan", 3, FEB_28],
      ["plan", 3, JAN_31],
    ]);
    t.checked();
  });
});
