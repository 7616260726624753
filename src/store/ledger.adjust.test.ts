import { afterEach, describe, expect, it } from "vitest";
import { billingStores } from "../testing/billing-store.js";
import { STORE_ENGINES } from "../testing/databases.js";

/**
 * Balance corrections as their own ledger entries: positive or negative, never below zero nor
 * below what requests in flight hold, exact under concurrency, and covered by the ledger check.
 */

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const stores = billingStores(engine);
  afterEach(() => stores.closeAll());

  it("a mistaken top-up is reversed by an adjustment: the history stays, the ledger check passes", async () => {
    const t = await stores.open({ balanceMicro: 5_000_000 });
    const reversed = await t.store.ledger.adjust(t.accountId, -1_500_000, "reverses the duplicate top-up");
    expect(reversed.balanceMicro).toBe(3_500_000);
    expect(reversed.entry).toMatchObject({ kind: "adjustment", amountMicro: -1_500_000, note: "reverses the duplicate top-up" });
    expect((await t.store.ledger.adjust(t.accountId, 250_000, "goodwill credit")).balanceMicro).toBe(3_750_000);
    const kinds = (await t.store.ledger.entries(t.accountId)).map((e) => e.kind);
    expect(kinds).toEqual(["adjustment", "adjustment", "top_up"]);
    expect(await t.store.ledger.check()).toMatchObject({ ok: true });
  });

  it("never below zero, nor below what requests in flight hold; a refusal changes nothing", async () => {
    const t = await stores.open({ balanceMicro: 1_000, plan: { pricePerMillion: 1_000_000 } });
    const before = await t.database.dump();
    await expect(t.store.ledger.adjust(t.accountId, -1_001, "too much")).rejects.toThrow(/below zero: it is 1000 µ€/);
    expect(await t.database.dump()).toEqual(before);
    await t.billing.reserve(await t.payer(), { questions: 1, inputTokens: 400, requestId: "req_held" });
    await expect(t.store.ledger.adjust(t.accountId, -601, "past the hold")).rejects.toThrow(/of which 400 µ€ is held/);
    expect((await t.store.ledger.adjust(t.accountId, -600, "down to the hold")).balanceMicro).toBe(400);
    await expect(t.store.ledger.adjust(t.accountId, 0, "nothing")).rejects.toThrow(/non-zero/);
    await expect(t.store.ledger.adjust(t.accountId, 5, " ")).rejects.toThrow(/needs a note/);
    await expect(t.store.ledger.adjust("acct_missing", 5, "x")).rejects.toMatchObject({ code: "account_not_found" });
  });

  it("20 concurrent −1 € adjustments through two store instances on 10 €: exactly 10 pass, balance 0", async () => {
    const t = await stores.open({ balanceMicro: 10_000_000 });
    const second = await t.database.store({ now: t.clock.now });
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => [t.store, second][i % 2]!.ledger.adjust(t.accountId, -1_000_000, `correction ${i}`)),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(10);
      expect((await t.billing.standing(await t.payer()))?.balanceMicro).toBe(0);
      expect(await t.store.ledger.check()).toMatchObject({ ok: true });
    } finally {
      await second.close();
    }
  });
});
