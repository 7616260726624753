import { afterEach, describe, expect, it } from "vitest";
import { openBillingStore, type BillingFixture } from "../testing/billing-store.js";
import { IDEMPOTENCY_RETENTION_MS } from "./billing.js";
import { useTempDir } from "./test-helpers.js";

/** Idempotency keys (Stripe semantics): claim, replay, mismatch, running, abandon, expiry. */

const temp = useTempDir();
const open: BillingFixture[] = [];
afterEach(() => {
  for (const fixture of open.splice(0)) fixture.store.close();
  temp.cleanup();
});

const TTL = 60_000;
const DAY = 24 * 60 * 60 * 1000;

function setup() {
  const t = openBillingStore(temp.dir(), { plan: { pricePerMillion: 1_000_000 }, balanceMicro: 10_000, reservationTtlMs: TTL });
  open.push(t);
  const claim = (key: string, requestHash: string, owner: string, accountId = t.accountId) =>
    t.store.idempotency.claim({ accountId, key, requestHash, owner });
  /** What the route does for a claimed key: reserve under the owner's request id, settle with the body. */
  const complete = (key: string, owner: string, body: string, accountId = t.accountId) => {
    const outcome = t.store.billing.reserve({ accountId, questions: 1, inputTokens: 100, requestId: owner });
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    return t.store.billing.settle(outcome.reservation, { key, body });
  };
  const charges = (accountId = t.accountId) => t.store.ledger.entries(accountId).filter((e) => e.kind === "charge").length;
  return { ...t, claim, complete, charges };
}

describe("idempotency keys", () => {
  it("keep 24 hours", () => {
    expect(IDEMPOTENCY_RETENTION_MS).toBe(DAY);
  });

  it("claimed, running while the first request runs, then replayed for the same body and refused for another", () => {
    const t = setup();
    expect(t.claim("k1", "hash-a", "req_1")).toEqual({ kind: "claimed" });
    expect(t.claim("k1", "hash-a", "req_2"), "same body while running").toEqual({ kind: "running" });
    expect(t.claim("k1", "hash-b", "req_3"), "other body while running").toEqual({ kind: "running" });
    const settled = t.complete("k1", "req_1", '{"answers":1}');
    expect(settled).toMatchObject({ billedTo: "balance", standing: { balanceMicro: 9_900 } });
    expect(t.claim("k1", "hash-a", "req_4")).toEqual({
      kind: "replay",
      response: { body: '{"answers":1}', billedTo: "balance", standing: settled!.standing },
    });
    expect(t.claim("k1", "hash-b", "req_5")).toEqual({ kind: "mismatch" });
    expect(t.charges(), "replays charge nothing").toBe(1);
  });

  it("are replayed until 24 h after the answer, then forgotten (and swept)", () => {
    const t = setup();
    t.claim("k", "h", "req_1");
    t.clock.advance(5_000);
    t.complete("k", "req_1", "first");
    t.clock.advance(DAY - 1);
    expect(t.claim("k", "h", "req_2")).toMatchObject({ kind: "replay", response: { body: "first" } });
    expect(t.claim("k", "other", "req_3")).toEqual({ kind: "mismatch" });
    expect(t.store.billing.sweep().idempotencyKeys, "not yet expired").toBe(0);
    t.clock.advance(1);
    expect(t.store.billing.sweep().idempotencyKeys, "24 h after the answer").toBe(1);
    expect(t.claim("k", "other", "req_4"), "a forgotten key is free for any body").toEqual({ kind: "claimed" });
    t.complete("k", "req_4", "second");
    expect(t.claim("k", "other", "req_5")).toMatchObject({ kind: "replay", response: { body: "second" } });
    expect(t.charges()).toBe(2);
  });

  it("an expired key is claimable even before the sweeper has run", () => {
    const t = setup();
    t.claim("k", "h", "req_1");
    t.complete("k", "req_1", "first");
    t.clock.advance(DAY);
    expect(t.claim("k", "h", "req_2")).toEqual({ kind: "claimed" });
  });

  it("belong to one account: another account's same key is independent", () => {
    const t = setup();
    const other = t.store.accounts.create({ name: "other", plan: t.planId });
    t.store.ledger.topUp(other.id, 1_000);
    t.claim("shared", "h", "req_1");
    expect(t.claim("shared", "h", "req_2", other.id)).toEqual({ kind: "claimed" });
    t.complete("shared", "req_1", "mine");
    t.complete("shared", "req_2", "theirs", other.id);
    expect(t.claim("shared", "h", "req_3")).toMatchObject({ kind: "replay", response: { body: "mine" } });
    expect(t.claim("shared", "h", "req_4", other.id)).toMatchObject({ kind: "replay", response: { body: "theirs" } });
    expect([t.charges(), t.charges(other.id)]).toEqual([1, 1]);
  });

  it("abandon frees a running claim for a retry, but only its owner's, and never a completed one", () => {
    const t = setup();
    t.claim("k", "h", "req_1");
    t.store.idempotency.abandon({ accountId: t.accountId, key: "k", owner: "req_other" });
    expect(t.claim("k", "h", "req_2"), "someone else's abandon").toEqual({ kind: "running" });
    t.store.idempotency.abandon({ accountId: t.accountId, key: "k", owner: "req_1" });
    expect(t.claim("k", "h2", "req_3"), "after the failure, any body may retry").toEqual({ kind: "claimed" });
    t.complete("k", "req_3", "done");
    t.store.idempotency.abandon({ accountId: t.accountId, key: "k", owner: "req_3" });
    expect(t.claim("k", "h2", "req_4")).toMatchObject({ kind: "replay", response: { body: "done" } });
  });

  it("a claim left running by a crashed process expires with its reservation's TTL", () => {
    const t = setup();
    t.claim("k", "h", "req_crashed");
    t.clock.advance(TTL - 1);
    expect(t.claim("k", "h", "req_2")).toEqual({ kind: "running" });
    t.clock.advance(1);
    expect(t.claim("k", "h", "req_3")).toEqual({ kind: "claimed" });
  });

  it("a request that outlived its claim cannot overwrite the claim a retry took over", () => {
    const t = setup();
    t.claim("k", "h", "req_slow");
    const slow = t.store.billing.reserve({ accountId: t.accountId, questions: 1, inputTokens: 100, requestId: "req_slow" });
    if (!slow.ok) throw new Error(JSON.stringify(slow));
    t.clock.advance(TTL);
    t.store.billing.sweep();
    expect(t.claim("k", "h", "req_retry")).toEqual({ kind: "claimed" });
    expect(t.store.billing.settle(slow.reservation, { key: "k", body: "slow" }), "its hold was swept").toBeUndefined();
    expect(t.claim("k", "h", "req_again"), "still the retry's").toEqual({ kind: "running" });
    t.complete("k", "req_retry", "retry");
    expect(t.claim("k", "h", "req_last")).toMatchObject({ kind: "replay", response: { body: "retry" } });
    expect(t.charges()).toBe(1);
  });
});
