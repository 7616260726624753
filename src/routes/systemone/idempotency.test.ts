import { describe, expect, it } from "vitest";
import { addAccount, billingState, judgmentBody, moneyTables, useBillingServers, waitFor, type BillingServer } from "../../testing/billing-http.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { call, postJudgment, show, type Caller, type CapturedResponse } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";

/**
 * Idempotency-Key over HTTP: the statuses and headers of a replay, a reused key and a key in
 * use, on both stores. The policy behind them (charged once, replayed without the model, the key
 * freed by a failed attempt) is tested at the service seam, in services/judging/judge.test.ts.
 */

const DAY = 24 * 60 * 60 * 1000;
const withKey = (caller: Caller, body: unknown, key: string) => postJudgment(caller, body, { headers: { "idempotency-key": key } });
const charges = async (s: BillingServer, accountId = s.accountId) => (await billingState(s, accountId)).entries.filter((e) => e.kind === "charge");

function expectReplayOf(replay: CapturedResponse, first: CapturedResponse) {
  const message = `${show(first, "first:")}\n${show(replay, "replay:")}`;
  expect(replay.status, message).toBe(200);
  expect(replay.text, message).toBe(first.text);
  expect(replay.headers.get("idempotent-replayed"), message).toBe("true");
  // The billing headers are the stored ones, as the first answer had them; the rate-limit
  // headers are this attempt's own.
  const billing = (r: CapturedResponse) => [r.headers.get("x-billed-to"), r.headers.get("x-plan-usage"), r.headers.get("x-balance-remaining")];
  expect(billing(replay), message).toEqual(billing(first));
  expect(billing(first)[0], message).toBe("balance");
  expect(replay.headers.get("x-ratelimit-limit"), message).toBe(first.headers.get("x-ratelimit-limit"));
  expect(replay.headers.get("x-request-id"), message).not.toBe(first.headers.get("x-request-id"));
}

describe.each(STORE_ENGINES)("on %s", (engine) => {
  // After each test the helper opens billing.engine's gates before closing the servers.
  const billing = useBillingServers({ stalling: true, store: engine });
  const server = (balanceMicro = 1_000_000) => billing.server({ plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro });

  describe("Idempotency-Key", () => {
    it("a retry with the same key and body gets the stored response, marked replayed, with the stored billing headers", async () => {
      const s = await server();
      const first = await withKey(s, judgmentBody(2), "order-1");
      expect(first.status, show(first)).toBe(200);
      expect(first.headers.get("idempotent-replayed"), show(first)).toBeNull();
      for (let i = 0; i < 3; i++) expectReplayOf(await withKey(s, judgmentBody(2), "order-1"), first);
      expect(await s.services.ledger.check()).toMatchObject({ ok: true });
    });

    it("the same key with another body is refused with 400 and charges nothing; the original stays replayable", async () => {
      const s = await server();
      const first = await withKey(s, judgmentBody(1), "k");
      const before = await moneyTables(s.database);
      const reused = await withKey(s, judgmentBody(1, "another state"), "k");
      expectErrorResponse(reused, 400, "idempotency_key_reused");
      expect(await moneyTables(s.database), show(reused)).toEqual(before);
      expectReplayOf(await withKey(s, judgmentBody(1), "k"), first);
    });

    it("while the first request runs, the same key gets 409 (whatever the body); afterwards the replay", async () => {
      const s = await server();
      const stall = billing.engine.stall();
      let first: Promise<CapturedResponse>;
      try {
        first = withKey(s, judgmentBody(1), "slow");
        await stall.entered;
        for (const body of [judgmentBody(1), judgmentBody(3)]) {
          const busy = await withKey(s, body, "slow");
          expectErrorResponse(busy, 409, "idempotency_key_in_use");
          expect(busy.headers.get("x-ratelimit-limit"), show(busy)).toMatch(/^\d+$/);
          expect(busy.headers.get("x-billed-to"), show(busy)).toBeNull();
        }
        expect(stall.waiting, "the 409s did not reach the model").toBe(1);
      } finally {
        stall.release();
      }
      const done = await first;
      expect(done.status, show(done)).toBe(200);
      expectReplayOf(await withKey(s, judgmentBody(1), "slow"), done);
      expect(await charges(s)).toHaveLength(1);
    });

    it("a first attempt whose client disconnected leaves the key free: the retry runs and is charged once", async () => {
      const s = await server();
      const stall = billing.engine.stall();
      const controller = new AbortController();
      try {
        const gone = call(s.url, "/v1/systemone", {
          method: "POST",
          headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json", "idempotency-key": "hung-up" },
          body: JSON.stringify(judgmentBody(1)),
          signal: controller.signal,
        }).catch((error: unknown) => error);
        await stall.entered;
        controller.abort();
        expect(await gone).toBeInstanceOf(Error);
        let state = await billingState(s, s.accountId);
        await waitFor(
          async () => (state = await billingState(s, s.accountId)).reservedMicro === 0,
          () => JSON.stringify(state),
        );
      } finally {
        stall.release();
      }
      const retried = await withKey(s, judgmentBody(1), "hung-up");
      expect(retried.status, show(retried)).toBe(200);
      expect(retried.headers.get("idempotent-replayed"), show(retried)).toBeNull();
      expect(await charges(s)).toHaveLength(1);
    });

    it("keys belong to one account: another account's same key and body run and are charged on their own", async () => {
      const s = await server();
      const other = await addAccount(s, { balanceMicro: 1_000_000 });
      const mine = await withKey(s, judgmentBody(1), "shared-key");
      const theirs = await withKey(other, judgmentBody(1), "shared-key");
      expect(theirs.status, show(theirs)).toBe(200);
      expect(theirs.headers.get("idempotent-replayed"), show(theirs)).toBeNull();
      expectReplayOf(await withKey(s, judgmentBody(1), "shared-key"), mine);
      expectReplayOf(await withKey(other, judgmentBody(1), "shared-key"), theirs);
      expect([(await charges(s)).length, (await charges(s, other.accountId)).length]).toEqual([1, 1]);
    });

    it("a key is kept 24 hours after its answer, then forgotten: the same request runs and is charged again", async () => {
      const s = await server();
      const first = await withKey(s, judgmentBody(1), "daily");
      s.clock.advance(DAY - 1);
      expectReplayOf(await withKey(s, judgmentBody(1), "daily"), first);
      s.clock.advance(1);
      const again = await withKey(s, judgmentBody(1), "daily");
      expect(again.status, show(again)).toBe(200);
      expect(again.headers.get("idempotent-replayed"), show(again)).toBeNull();
      expect(await charges(s)).toHaveLength(2);
      expectReplayOf(await withKey(s, judgmentBody(1), "daily"), again);
    });
  });
});
