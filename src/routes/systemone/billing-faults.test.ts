// @lane timed: asserts on elapsed time, so it runs after everything else, beside one other timed file at most (src/testing/test-kinds.ts).
import { describe, expect, it } from "vitest";
import { EngineFailedError } from "../../engine/types.js";
import { billingHeadersOf, billingState, judgmentBody, moneyTables, useBillingServers, waitFor, type BillingServer } from "../../testing/billing-http.js";
import { reservationRows } from "../../testing/billing-store.js";
import { faultEngine } from "../../testing/fault-engines.js";
import { hangingEngine } from "../../testing/hanging-engine.js";
import { call, postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { createStallingEngine } from "../../testing/stalling-engine.js";
import { SERVER_PROCESS, startLineProcess } from "../../testing/worker-pool.js";
import { newTestDatabase, STORE_ENGINES } from "../../testing/databases.js";
import { testConfig } from "../../testing/server.js";
import { buildServices } from "../../services/build.js";

/** Whatever goes wrong between reserving a charge and sending the answer, nothing is charged. */

/** Both ways of paying: the plan's allowance, or the balance (500 tokens at 1 µ€ each). */
const PAYERS = [
  ["the plan", { allowanceQuestions: 10, pricePerMillion: 1_000_000 }, 0],
  ["the balance", { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, 10_000],
] as const;

describe.each(STORE_ENGINES)("on %s", (storeEngine) => {
  // The tiny engine is loaded by the first test that needs it; each server is given its engine.
  const billing = useBillingServers({ lazy: true, store: storeEngine });
  const { server } = billing;

  describe("nothing is charged when", () => {
    for (const [payer, plan, balanceMicro] of PAYERS) {
      it(`the engine fails (502 model_failed), with ${payer} paying: the hold is released before the answer`, async () => {
        let holdSeen = "";
        const s: BillingServer = await server({
          plan,
          balanceMicro,
          engine: faultEngine({
            prepare: () => ({ inputTokens: 500, inputTokensExact: true }),
            evaluate: async () => {
              holdSeen = JSON.stringify(await billingState(s, s.accountId));
              throw new EngineFailedError("injected: the model failed while evaluating");
            },
          }),
        });
        const before = await moneyTables(s.database);
        const failed = await postJudgment(s, judgmentBody(2));
        expectErrorResponse(failed, 502, "model_failed");
        expect(billingHeadersOf(failed), show(failed)).toMatchObject({ "x-billed-to": null, "x-ratelimit-remaining": expect.any(String) });
        expect(holdSeen, "the model ran while the charge was held").toMatch(balanceMicro ? /"reservedMicro":500/ : /"reserved":2/);
        expect(await moneyTables(s.database), `${show(failed)}\nheld while running: ${holdSeen}`).toEqual(before);
        expect(await s.services.ledger.check()).toMatchObject({ ok: true });
      });
    }

    it("the engine never answers: 502 model_timeout after requestTimeoutMs, the hold released at once", async () => {
      const engine = hangingEngine({ inputTokens: 500 });
      const s = await server({ engine, requestTimeoutMs: 300, plan: PAYERS[1][1], balanceMicro: 10_000 });
      const before = await moneyTables(s.database);
      const started = performance.now();
      const timedOut = await postJudgment(s, judgmentBody(1));
      const ms = performance.now() - started;
      expectErrorResponse(timedOut, 502, "model_timeout");
      expect(ms, show(timedOut)).toBeGreaterThanOrEqual(290);
      // Only "it was this request's timeout, not some other": the bound is loose on purpose, so a
      // busy CI machine cannot fail it.
      expect(ms, show(timedOut)).toBeLessThan(15_000);
      expect([engine.calls, engine.aborted], "the engine was asked once and told to stop").toEqual([1, 1]);
      expect(await moneyTables(s.database), show(timedOut)).toEqual(before);
    });

    for (const [payer, plan, balanceMicro] of PAYERS) {
      it(`the client disconnects while the model is busy, with ${payer} paying: the hold is released without waiting for the model`, async () => {
        const engine = createStallingEngine(await billing.tiny());
        const s = await server({ engine, plan, balanceMicro });
        const before = await moneyTables(s.database);
        const stall = engine.stall();
        const controller = new AbortController();
        try {
          const gone = call(s.url, "/v1/systemone", {
            method: "POST",
            headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
            body: JSON.stringify(judgmentBody(2)),
            signal: controller.signal,
          }).catch((error: unknown) => error);
          await stall.entered;
          const held = await billingState(s, s.accountId);
          expect(held.reservedMicro + held.reserved, `a hold while the model runs: ${JSON.stringify(held)}`).toBeGreaterThan(0);
          controller.abort();
          expect(await gone, "the client saw no answer").toBeInstanceOf(Error);
          let rows = await reservationRows(s.database);
          await waitFor(
            async () => (rows = await reservationRows(s.database)).length === 0,
            () => `the hold is still there: ${JSON.stringify(rows)}`,
          );
          expect(stall.waiting, "released while the model was still busy with it").toBe(1);
          expect(await moneyTables(s.database)).toEqual(before);
        } finally {
          stall.release();
        }
        // The next request is charged normally (so the test above could have seen a charge).
        const next = await postJudgment(s, judgmentBody(2));
        expect(next.status, show(next)).toBe(200);
        const after = await billingState(s, s.accountId);
        expect(
          after.entries.filter((e) => e.kind !== "top_up"),
          JSON.stringify(after),
        ).toHaveLength(1);
        expect(await s.services.ledger.check()).toMatchObject({ ok: true });
      });
    }

    it("the hold expires and is swept while the model runs: the late answer is withheld (502) and nothing is charged", async () => {
      const engine = createStallingEngine(await billing.tiny());
      // A hold lives for the request timeout plus the grace: 5 s of the services' clock here.
      const s = await server({ engine, plan: PAYERS[1][1], balanceMicro: 10_000, requestTimeoutMs: 5_000, reservationGraceMs: 0 });
      const before = await moneyTables(s.database);
      const stall = engine.stall();
      let late: Promise<CapturedResponse>;
      try {
        late = postJudgment(s, judgmentBody(1));
        await stall.entered;
        s.clock.advance(5_000);
        expect((await s.services.billing.sweep()).reservations, "the running request's hold, expired").toBe(1);
      } finally {
        stall.release();
      }
      const withheld = await late;
      expectErrorResponse(withheld, 502, "model_timeout");
      expect(await moneyTables(s.database), show(withheld)).toEqual(before);
      expect(await s.services.ledger.check()).toMatchObject({ ok: true });
    });

    it("the server process is killed between reserve and settle: the hold outlives it until the sweeper releases it", async () => {
      const database = newTestDatabase(storeEngine);
      const child = startLineProcess(SERVER_PROCESS, [
        JSON.stringify({
          location: database.location,
          schema: database.schema,
          inputTokens: 700,
          plan: { name: "killed", requestsPerMinute: 100, ...PAYERS[1][1] },
          balanceMicro: 10_000,
          reservationGraceMs: 30_000,
        }),
      ]);
      // Another instance on the same database, whose clock the test moves to the hold's expiry.
      let offset = 0;
      const other = { services: await buildServices(testConfig(database), { now: () => Date.now() + offset }) };
      const { services } = other;
      try {
        const { url, key, accountId } = (await child.next()) as { url: string; key: string; accountId: string };
        const inFlight = postJudgment({ url, key }, judgmentBody(1)).catch((error: unknown) => error);
        let rows = await reservationRows(database);
        await waitFor(
          async () => (rows = await reservationRows(database)).length === 1,
          () => `no reservation yet: ${JSON.stringify(rows)}`,
        );
        await child.kill();
        expect(await inFlight, "the client lost its connection").toBeInstanceOf(Error);

        const [row] = await reservationRows(database);
        expect(await billingState(other, accountId), "held after the kill").toMatchObject({ balanceMicro: 10_000, reservedMicro: 700 });
        expect(await services.ledger.check(), "an open hold is consistent").toMatchObject({ ok: true });
        expect((await services.billing.sweep()).reservations, "not yet expired").toBe(0);
        offset = Number(row.expires_at) - Date.now();
        expect((await services.billing.sweep()).reservations, "at its expiry").toBe(1);
        const after = await billingState(other, accountId);
        expect(after, JSON.stringify(after)).toMatchObject({ balanceMicro: 10_000, reservedMicro: 0, used: 0, reserved: 0 });
        expect(after.entries.map((e) => e.kind)).toEqual(["top_up"]);
        expect(await services.ledger.check()).toMatchObject({ ok: true, mismatches: [] });
      } finally {
        await child.kill();
        await services.close();
        await database.drop();
      }
    });
  });
});
