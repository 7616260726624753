import { afterEach, describe, expect, it } from "vitest";
import { billingStores, payerOf } from "../testing/billing-store.js";
import { STORE_ENGINES } from "../testing/databases.js";
import { IDEMPOTENCY_RETENTION_MS } from "./billing.js";

/** Idempotency keys (Stripe semantics): claim, replay, mismatch, running, abandon, expiry. */

const TTL = 60_000;
const DAY = 24 * 60 * 60 * 1000;

it("idempotency keys keep 24 hours", () => {
  expect(IDEMPOTENCY_RETENTION_MS).toBe(DAY);
});

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const stores = billingStores(engine);
  afterEach(() => stores.closeAll());

  async function setup() {
    const t = await stores.open({ plan: { pricePerMillion: 1_000_000 }, balanceMicro: 10_000, reservationTtlMs: TTL });
    const claim = (key: string, requestHash: string, owner: string, accountId = t.accountId) =>
      t.store.idempotency.claim({ accountId, key, requestHash, owner });
    /** What the route does for a claimed key: reserve under the owner's request id, then settle with the body. */
    const reserve = async (owner: string, accountId = t.accountId) =>
      t.billing.reserve(await payerOf(t.store, accountId), { questions: 1, inputTokens: 100, requestId: owner });
    const complete = async (key: string, owner: string, body: string, accountId = t.accountId) =>
      t.billing.settle(await reserve(owner, accountId), { key, body });
    const charges = async (accountId = t.accountId) => (await t.store.ledger.entries(accountId)).filter((e) => e.kind === "charge").length;
    return { ...t, claim, reserve, complete, charges };
  }

  describe("idempotency keys", () => {
    it("claimed, running while the first request runs, then replayed for the same body and refused for another", async () => {
      const t = await setup();
      expect(await t.claim("k1", "hash-a", "req_1")).toEqual({ kind: "claimed" });
      expect(await t.claim("k1", "hash-a", "req_2"), "same body while running").toEqual({ kind: "running" });
      expect(await t.claim("k1", "hash-b", "req_3"), "other body while running").toEqual({ kind: "running" });
      const settled = await t.complete("k1", "req_1", '{"answers":1}');
      expect(settled).toMatchObject({ billedTo: "balance", standing: { balanceMicro: 9_900 } });
      expect(await t.claim("k1", "hash-a", "req_4")).toEqual({
        kind: "replay",
        response: { body: '{"answers":1}', billedTo: "balance", standing: settled!.standing },
      });
      expect(await t.claim("k1", "hash-b", "req_5")).toEqual({ kind: "mismatch" });
      expect(await t.charges(), "replays charge nothing").toBe(1);
    });

    it("are replayed until 24 h after the answer, then forgotten (and swept)", async () => {
      const t = await setup();
      await t.claim("k", "h", "req_1");
      t.clock.advance(5_000);
      await t.complete("k", "req_1", "first");
      t.clock.advance(DAY - 1);
      expect(await t.claim("k", "h", "req_2")).toMatchObject({ kind: "replay", response: { body: "first" } });
      expect(await t.claim("k", "other", "req_3")).toEqual({ kind: "mismatch" });
      expect(await t.store.idempotency.sweep(), "not yet expired").toBe(0);
      t.clock.advance(1);
      expect(await t.store.idempotency.sweep(), "24 h after the answer").toBe(1);
      expect(await t.claim("k", "other", "req_4"), "a forgotten key is free for any body").toEqual({ kind: "claimed" });
      await t.complete("k", "req_4", "second");
      expect(await t.claim("k", "other", "req_5")).toMatchObject({ kind: "replay", response: { body: "second" } });
      expect(await t.charges()).toBe(2);
    });

    it("an expired key is claimable even before the sweeper has run", async () => {
      const t = await setup();
      await t.claim("k", "h", "req_1");
      await t.complete("k", "req_1", "first");
      t.clock.advance(DAY);
      expect(await t.claim("k", "h", "req_2")).toEqual({ kind: "claimed" });
    });

    it("belong to one account: another account's same key is independent", async () => {
      const t = await setup();
      const other = await t.store.accounts.create({ name: "other", plan: t.planId });
      await t.store.ledger.topUp(other.id, 1_000);
      await t.claim("shared", "h", "req_1");
      expect(await t.claim("shared", "h", "req_2", other.id)).toEqual({ kind: "claimed" });
      await t.complete("shared", "req_1", "mine");
      await t.complete("shared", "req_2", "theirs", other.id);
      expect(await t.claim("shared", "h", "req_3")).toMatchObject({ kind: "replay", response: { body: "mine" } });
      expect(await t.claim("shared", "h", "req_4", other.id)).toMatchObject({ kind: "replay", response: { body: "theirs" } });
      expect([await t.charges(), await t.charges(other.id)]).toEqual([1, 1]);
    });

    it("abandon frees a running claim for a retry, but only its owner's, and never a completed one", async () => {
      const t = await setup();
      await t.claim("k", "h", "req_1");
      await t.store.idempotency.abandon({ accountId: t.accountId, key: "k", owner: "req_other" });
      expect(await t.claim("k", "h", "req_2"), "someone else's abandon").toEqual({ kind: "running" });
      await t.store.idempotency.abandon({ accountId: t.accountId, key: "k", owner: "req_1" });
      expect(await t.claim("k", "h2", "req_3"), "after the failure, any body may retry").toEqual({ kind: "claimed" });
      await t.complete("k", "req_3", "done");
      await t.store.idempotency.abandon({ accountId: t.accountId, key: "k", owner: "req_3" });
      expect(await t.claim("k", "h2", "req_4")).toMatchObject({ kind: "replay", response: { body: "done" } });
    });

    it("a claim left running by a crashed process expires with its reservation's TTL", async () => {
      const t = await setup();
      await t.claim("k", "h", "req_crashed");
      t.clock.advance(TTL - 1);
      expect(await t.claim("k", "h", "req_2")).toEqual({ kind: "running" });
      t.clock.advance(1);
      expect(await t.claim("k", "h", "req_3")).toEqual({ kind: "claimed" });
    });

    it("a request that outlived its claim cannot overwrite the claim a retry took over", async () => {
      const t = await setup();
      await t.claim("k", "h", "req_slow");
      const slow = await t.reserve("req_slow");
      t.clock.advance(TTL);
      await t.store.billing.sweep();
      expect(await t.claim("k", "h", "req_retry")).toEqual({ kind: "claimed" });
      expect(await t.billing.settle(slow, { key: "k", body: "slow" }), "its hold was swept").toBeUndefined();
      expect(await t.claim("k", "h", "req_again"), "still the retry's").toEqual({ kind: "running" });
      await t.complete("k", "req_retry", "retry");
      expect(await t.claim("k", "h", "req_last")).toMatchObject({ kind: "replay", response: { body: "retry" } });
      expect(await t.charges()).toBe(1);
    });

    it("20 concurrent claims of one new key, through two store instances, make exactly one owner; the others see it running", async () => {
      const t = await setup();
      // A second instance on the same database: its own connection (SQLite) or pool (PostgreSQL).
      const second = await t.database.store({ now: t.clock.now, reservationTtlMs: TTL });
      const stores = [t.store, second];
      const claims = await Promise.all(
        Array.from({ length: 20 }, (_, i) => stores[i % 2]!.idempotency.claim({ accountId: t.accountId, key: "raced", requestHash: "h", owner: `req_${i}` })),
      );
      const message = JSON.stringify(claims);
      expect(
        claims.filter((c) => c.kind === "claimed"),
        message,
      ).toHaveLength(1);
      expect(
        claims.filter((c) => c.kind === "running"),
        message,
      ).toHaveLength(19);
      const owner = `req_${claims.findIndex((c) => c.kind === "claimed")}`;
      const rows = await t.database.dump();
      expect(rows.idempotency_keys, JSON.stringify(rows.idempotency_keys)).toEqual([expect.stringContaining(`"owner":"${owner}"`)]);
    });
  });
});
