import { afterEach, describe, expect, it } from "vitest";
import { billingStores, payerOf } from "../testing/billing-store.js";
import { STORE_ENGINES } from "../testing/databases.js";

/**
 * A request owns its Idempotency-Key from its claim to its settle: taking the hold extends the
 * claim to the hold's own expiry, and a settle whose key another request took meanwhile commits
 * nothing and gives its hold back. Otherwise a retry that took an expired claim and the first
 * request are both charged (issue 21: PostgreSQL behind a slow proxy, grace 0, two charges).
 */

const TTL = 60_000;

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const stores = billingStores(engine);
  afterEach(() => stores.closeAll());

  async function setup() {
    const t = await stores.open({ plan: { pricePerMillion: 1_000_000 }, balanceMicro: 10_000, reservationTtlMs: TTL });
    const claim = (key: string, owner: string) => t.store.idempotency.claim({ accountId: t.accountId, key, requestHash: "h", owner });
    const reserve = async (owner: string, idempotencyKey?: string) =>
      t.billing.reserve(await payerOf(t.store, t.accountId), { questions: 1, inputTokens: 100, requestId: owner, idempotencyKey });
    const charges = async () => (await t.store.ledger.entries(t.accountId)).filter((e) => e.kind === "charge");
    const standing = async () => t.billing.standing(await t.payer());
    return { ...t, claim, reserve, charges, standing };
  }

  it("a settle whose key a retry took over commits nothing and releases its hold: one charge, not two", async () => {
    const t = await setup();
    expect(await t.claim("k", "req_slow")).toEqual({ kind: "claimed" });
    // Prepared slowly: its hold is taken late, its claim (taken at 0) expires first.
    t.clock.advance(TTL / 2);
    const slow = await t.billing.reserve(await t.payer(), { questions: 1, inputTokens: 100, requestId: "req_slow" });
    t.clock.advance(TTL / 2);
    expect(await t.claim("k", "req_retry"), "the retry takes the expired claim").toEqual({ kind: "claimed" });
    const retry = await t.reserve("req_retry", "k");
    expect(await t.billing.settle(retry, { key: "k", body: "retry" })).toBeDefined();
    const late = await t.billing.settle(slow, { key: "k", body: "slow" });
    const charges = await t.charges();
    expect(late, "the slow request no longer owns its key").toBeUndefined();
    expect(charges, JSON.stringify(charges)).toHaveLength(1);
    expect(await t.standing(), "the slow request's hold is released").toMatchObject({ balanceMicro: 9_900, heldMicro: 0 });
    expect(await t.claim("k", "req_last")).toMatchObject({ kind: "replay", response: { body: "retry" } });
  });

  it("taking the hold extends the claim to the hold's expiry, so no retry takes the key while the hold lives", async () => {
    const t = await setup();
    await t.claim("k", "req_1");
    t.clock.advance(TTL - 1);
    const held = await t.reserve("req_1", "k");
    t.clock.advance(TTL - 2);
    expect(await t.claim("k", "req_2"), "the claim lives as long as the hold").toEqual({ kind: "running" });
    expect(await t.billing.settle(held, { key: "k", body: "first" })).toBeDefined();
    expect(await t.claim("k", "req_3")).toMatchObject({ kind: "replay", response: { body: "first" } });
    expect(await t.charges()).toHaveLength(1);
  });

  it("a hold for a key another request took is refused before anything is held", async () => {
    const t = await setup();
    await t.claim("k", "req_1");
    t.clock.advance(TTL);
    await t.claim("k", "req_2");
    await expect(t.reserve("req_1", "k")).rejects.toThrow(/Idempotency-Key/);
    expect(await t.standing()).toMatchObject({ balanceMicro: 10_000, heldMicro: 0 });
  });
});
