import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chargeFor } from "../../../money/money.js";
import { buildPrompt } from "../../../judgment/prompt.js";
import type { Question } from "../../../judgment/schema.js";
import { billingState, moneyTables } from "../../../testing/billing-http.js";
import { call, postJudgment, show } from "../../../testing/http-client.js";
import { expectErrorResponse, okJson } from "../../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../../testing/server.js";
import { createSystemOneEngine } from "./engine.js";

/**
 * The gateway in front of a real second instance of this service (the tiny model): the same
 * request through the gateway and directly gives the same answers, and the gateway bills its
 * own account: an upper-bound hold, settled at the upstream's usage.
 */

const LIMITS = { options: 255, levels: 10, questions: 64 };
const PRICE = 50_000; // µ€ per million tokens: the balance pays, so every token shows in the ledger
const BALANCE = 1_000_000_000;

let upstream: TestServer;
const gateways: TestServer[] = [];

beforeAll(async () => {
  upstream = await startTestServer();
});
afterEach(async () => {
  for (const gateway of gateways.splice(0)) {
    await gateway.close();
    await gateway.engine.close();
  }
});
afterAll(async () => {
  await upstream?.close();
});

async function startGateway(options: { balanceMicro?: number; key?: string } = {}) {
  const engine = createSystemOneEngine({
    server: { url: upstream.url, key: options.key ?? upstream.key, timeoutMs: 10_000 },
    upstreamLimits: LIMITS,
    maxRequestTokens: 100_000,
    contextSize: 8192,
  });
  await engine.ready;
  const gateway = await startTestServer({
    engine,
    plan: { allowanceQuestions: 0, pricePerMillion: PRICE },
    balanceMicro: options.balanceMicro ?? BALANCE,
  });
  gateways.push(gateway);
  return gateway;
}

/**
 * Ids and option names of every kind the ecosystem sends ("__proto__" among them, so the body is
 * JSON text: an object literal would set a prototype instead), structured descriptions, a null level.
 */
const BODY = `{
  "state": {"ticket": "I was charged twice for order 1234 😠", "lines": [{"sku": "A-1", "qty": 2}]},
  "questions": {
    "topic 🎫": {"type": "choice", "instructions": "What is the ticket about?",
      "criteria": {"billing": "money taken or owed", "__proto__": null, "배송": {"en": "shipping"}}},
    "__proto__": {"type": "noul", "instructions": "The customer is angry.", "criteria": {"true": "rude or upset"}},
    "x.y-urgency": {"type": "score", "instructions": {"ask": "How urgent?"}, "criteria": ["none", null, {"level": "high"}, "critical"]},
    "plain": {"type": "noul", "instructions": "It mentions an order number."}
  }
}`;

/** The parsed questions, in the order the route sees them, for computing the bound the gateway holds. */
function questionsOf(body: string): Question[] {
  return Object.values(JSON.parse(body).questions) as Question[];
}

describe("the System One gateway in front of a real instance", () => {
  it("gives the same probabilities, choice, score, legend and confidence as the upstream directly", async () => {
    const gateway = await startGateway();
    const direct = okJson(await postJudgment(upstream, BODY));
    const through = okJson(await postJudgment(gateway, BODY));
    const message = JSON.stringify({ direct, through }, null, 1);
    expect(Object.keys(through.answers), message).toEqual(Object.keys(direct.answers));
    expect(Object.keys(through.answers), message).toContain("__proto__");
    for (const id of Object.keys(direct.answers)) {
      const [d, g] = [Object.getOwnPropertyDescriptor(direct.answers, id)!.value, Object.getOwnPropertyDescriptor(through.answers, id)!.value];
      expect(Object.keys(g).sort(), `${id}\n${message}`).toEqual(Object.keys(d).sort());
      expect(g.type, message).toBe(d.type);
      if (d.type === "noul") expect(g.noul, `${id}\n${message}`).toBeCloseTo(d.noul, 12);
      if (d.type === "choice") expect(g.choice, `${id}\n${message}`).toBe(d.choice);
      if (d.type === "score") {
        expect(g.score, `${id}\n${message}`).toBeCloseTo(d.score, 12);
        expect(g.legend, `${id}\n${message}`).toEqual(d.legend);
      }
      if (d.type !== "noul") {
        expect(Object.keys(g.probabilities), `${id}\n${message}`).toEqual(Object.keys(d.probabilities));
        for (const key of Object.keys(d.probabilities)) {
          expect(own(g.probabilities, key), `${id} ${key}\n${message}`).toBeCloseTo(own(d.probabilities, key), 12);
        }
        expect(g.confidence, `${id}\n${message}`).toBeCloseTo(d.confidence, 12);
      }
    }
    expect(through.model, message).toBe(upstream.engine.modelId);
    expect(through.usage, message).toEqual(direct.usage);
  });

  it("passes the upstream's raw log-probabilities through include_logits", async () => {
    const gateway = await startGateway();
    const body = JSON.stringify({ ...JSON.parse(BODY), include_logits: true });
    const direct = okJson(await postJudgment(upstream, body));
    const through = okJson(await postJudgment(gateway, body));
    for (const id of ["topic 🎫", "x.y-urgency", "plain"]) {
      const [d, g] = [direct.answers[id].logits, through.answers[id].logits];
      expect(Object.keys(g), JSON.stringify({ d, g })).toEqual(Object.keys(d));
      for (const key of Object.keys(d)) expect(own(g, key), JSON.stringify({ d, g })).toBeCloseTo(own(d, key), 12);
    }
  });

  it("holds the upper bound and settles at the upstream's usage, on its own account", async () => {
    const gateway = await startGateway();
    const bound = (await gateway.engine.prepare(buildPrompt(JSON.parse(BODY).state, questionsOf(BODY)))).inputTokens;
    const upstreamBefore = await billingState(upstream, upstream.accountId);
    const response = await postJudgment(gateway, BODY);
    const tokens = okJson(response).usage.input_tokens;
    expect(tokens, show(response)).toBeGreaterThan(0);
    expect(tokens, `usage ${tokens} must be below the bound ${bound}`).toBeLessThan(bound);
    const state = await billingState(gateway, gateway.accountId);
    expect(state.entries.at(-1), JSON.stringify(state)).toMatchObject({
      kind: "charge",
      amountMicro: -chargeFor(tokens, PRICE),
      inputTokens: tokens,
      questions: 4,
    });
    expect(state, JSON.stringify(state)).toMatchObject({ balanceMicro: BALANCE - chargeFor(tokens, PRICE), reservedMicro: 0 });
    expect(await gateway.services.ledger.check(), "the gateway's ledger").toMatchObject({ ok: true });
    // The upstream billed its own account (the gateway's key there) for the same tokens.
    const upstreamAfter = await billingState(upstream, upstream.accountId);
    expect(upstreamAfter.entries.length, JSON.stringify(upstreamAfter)).toBe(upstreamBefore.entries.length + 1);
    expect(upstreamAfter.entries.at(-1), JSON.stringify(upstreamAfter)).toMatchObject({ inputTokens: tokens, questions: 4 });
  });

  it("refuses with 402 a balance that covers the usage but not the bound, asking the upstream nothing", async () => {
    const probe = await startGateway();
    const bound = (await probe.engine.prepare(buildPrompt(JSON.parse(BODY).state, questionsOf(BODY)))).inputTokens;
    const tokens = okJson(await postJudgment(upstream, BODY)).usage.input_tokens;
    expect(chargeFor(tokens, PRICE), `${tokens} tokens, bound ${bound}`).toBeLessThan(chargeFor(bound, PRICE) - 1);

    const short = await startGateway({ balanceMicro: chargeFor(bound, PRICE) - 1 });
    const upstreamBefore = await billingState(upstream, upstream.accountId);
    const before = await moneyTables(short.database);
    const refused = await postJudgment(short, BODY);
    expectErrorResponse(refused, 402, "insufficient_funds");
    expect(await moneyTables(short.database), show(refused)).toEqual(before);
    expect((await billingState(upstream, upstream.accountId)).entries.length, "the upstream was asked").toBe(upstreamBefore.entries.length);

    const exact = await startGateway({ balanceMicro: chargeFor(bound, PRICE) });
    const answered = okJson(await postJudgment(exact, BODY));
    const state = await billingState(exact, exact.accountId);
    expect(state.balanceMicro, JSON.stringify({ answered, state })).toBe(chargeFor(bound, PRICE) - chargeFor(tokens, PRICE));
  });

  it("reports the upstream's model, and its health with the URL but never the key", async () => {
    const gateway = await startGateway();
    const models = await call(gateway.url, "/v1/models");
    expect(models.json.models[0].name, show(models)).toBe(upstream.engine.modelId);
    const health = await call(gateway.url, "/health");
    expect(health.status, show(health)).toBe(200);
    expect(await gateway.engine.status()).toEqual({ state: "ready" });

    const wrongKey = await startGateway({ key: "sk-wrong-key-0123456789" });
    const refused = await postJudgment(wrongKey, BODY);
    expectErrorResponse(refused, 502, "model_unavailable");
    expect(refused.json.error, show(refused)).not.toContain(upstream.url);
    const unhealthy = await call(wrongKey.url, "/health");
    expect(unhealthy.status, show(unhealthy)).toBe(503);
    expect(unhealthy.json.error, show(unhealthy)).toContain(`${upstream.url}/v1/systemone answered 401: it refused this gateway's key`);
    expect(unhealthy.text, show(unhealthy)).not.toContain("sk-wrong-key-0123456789");
    expect(refused.text, show(refused)).not.toContain("sk-wrong-key-0123456789");
    expect(wrongKey.logLines.join("\n"), "a log line carries the key").not.toContain("sk-wrong-key-0123456789");
  });
});

function own(object: unknown, key: string): any {
  return Object.getOwnPropertyDescriptor(object, key)?.value;
}
