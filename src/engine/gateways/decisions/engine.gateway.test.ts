import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildPrompt } from "../../../judgment/prompt.js";
import type { Question } from "../../../judgment/schema.js";
import { chargeFor } from "../../../money/money.js";
import { postDecisions } from "../../../routes/decisions/test-helpers.js";
import { billingState } from "../../../testing/billing-http.js";
import { postJudgment, show } from "../../../testing/http-client.js";
import { expectErrorResponse, okJson, own } from "../../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../../testing/server.js";
import { startDecisionsStandIn, STAND_IN_KEY, type DecisionsStandIn } from "../../../testing/standins/decisions-upstream.js";
import { createDecisionsEngine } from "./engine.js";

/**
 * The decisions gateway in front of a real Decisions server (a second instance of this service,
 * the tiny model, behind the stand-in's key): the same request through the gateway and directly
 * gives the same answers (to 1e-12: both read the same prompt, and only the probabilities'
 * JSON round trip and their renormalisation lie between), and the gateway bills its own account
 * at the upstream's validated usage, never above the bound it held.
 */

const PRICE = 50_000; // µ€ per million tokens: the balance pays, so every token shows in the ledger
const BALANCE = 1_000_000_000;
const CLOSE = 12; // digits: the stated tolerance, 5e-13

let upstream: TestServer;
let standIn: DecisionsStandIn;
const gateways: TestServer[] = [];

beforeAll(async () => {
  upstream = await startTestServer();
  standIn = await startDecisionsStandIn(upstream);
});
afterEach(async () => {
  for (const gateway of gateways.splice(0)) {
    await gateway.close();
    await gateway.engine.close();
  }
});
afterAll(async () => {
  await standIn?.close();
  await upstream?.close();
});

async function startGateway(options: { questionsPerCall?: number; url?: string } = {}) {
  const engine = createDecisionsEngine({
    server: { url: options.url ?? standIn.url, key: STAND_IN_KEY, timeoutMs: 10_000 },
    upstreamLimits: { options: 255, levels: 10, questions: options.questionsPerCall ?? 64 },
    maxRequestTokens: 100_000,
    contextSize: 8192,
  });
  await engine.ready;
  const gateway = await startTestServer({ engine, plan: { allowanceQuestions: 0, pricePerMillion: PRICE }, balanceMicro: BALANCE });
  gateways.push(gateway);
  return gateway;
}

/** A JSON state with a number as written, "__proto__" as an id and an option, criteria the format has no field for, a null level. */
const BODY = `{
  "state": {"ticket": "I was charged twice for order 1234 😠", "total": 10.50, "lines": [{"sku": "A-1", "qty": 2}]},
  "questions": {
    "topic 🎫": {"type": "choice", "instructions": "What is the ticket about?",
      "criteria": {"billing": "money taken or owed", "__proto__": null, "배송": {"en": "shipping"}, "2": "two"}},
    "__proto__": {"type": "noul", "instructions": "The customer is angry.", "criteria": {"true": "rude or upset", "false": "calm"}},
    "x.y-urgency": {"type": "score", "instructions": {"ask": "How urgent?"}, "criteria": ["none", null, {"level": "high"}, "critical"]},
    "plain": {"type": "noul", "instructions": "It mentions an order number."},
    "empty": {"type": "noul", "instructions": null}
  }
}`;

function expectSameAnswers(direct: any, through: any): void {
  const message = JSON.stringify({ direct, through }, null, 1);
  expect(Object.keys(through.answers), message).toEqual(Object.keys(direct.answers));
  for (const id of Object.keys(direct.answers)) {
    const [d, g] = [own(direct.answers, id), own(through.answers, id)];
    expect(Object.keys(g).sort(), `${id}\n${message}`).toEqual(Object.keys(d).sort());
    if (d.type === "noul") expect(g.noul, `${id}\n${message}`).toBeCloseTo(d.noul, CLOSE);
    if (d.type === "choice") expect(g.choice, `${id}\n${message}`).toBe(d.choice);
    if (d.type === "score") {
      expect(g.score, `${id}\n${message}`).toBeCloseTo(d.score, CLOSE);
      expect(g.legend, `${id}\n${message}`).toEqual(d.legend);
    }
    if (d.type !== "noul") {
      expect(Object.keys(g.probabilities), `${id}\n${message}`).toEqual(Object.keys(d.probabilities));
      for (const key of Object.keys(d.probabilities))
        expect(own(g.probabilities, key), `${id} ${key}\n${message}`).toBeCloseTo(own(d.probabilities, key), CLOSE);
      expect(g.confidence, `${id}\n${message}`).toBeCloseTo(d.confidence, CLOSE);
    }
  }
}

describe("the decisions gateway in front of a real Decisions server", () => {
  it("gives /v1/systemone the same answers and usage as the upstream asked directly", async () => {
    const gateway = await startGateway();
    const direct = okJson(await postJudgment(upstream, BODY));
    const through = okJson(await postJudgment(gateway, BODY));
    expectSameAnswers(direct, through);
    // The same prompt, so the same tokens: the mapping loses nothing the model reads.
    expect(through.usage, JSON.stringify({ direct, through })).toEqual(direct.usage);
    expect(through.model).toBe("gpt-6-luna");
  });

  it("gives /v1/decisions the same answers as the upstream's own /v1/decisions, typed values restored", async () => {
    const gateway = await startGateway();
    const body = {
      model: "gpt-6-luna",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "I was charged twice." },
            { type: "input_json", data: { order: 1234 } },
          ],
        },
      ],
      questions: [
        { type: "choice", name: "refund", instructions: "Should we refund?", choices: [{ value: true }, { value: false, description: "not yet" }] },
        { type: "predicate", instructions: "The customer is angry." },
        { type: "score", name: "urgency", instructions: "How urgent?", levels: [{ label: "low" }, { label: "high", description: "today" }] },
      ],
    };
    const direct = okJson(await postDecisions(upstream, body));
    const through = okJson(await postDecisions(gateway, body));
    const message = JSON.stringify({ direct, through }, null, 1);
    expect(
      through.answers.map((a: any) => [a.type, a.name]),
      message,
    ).toEqual(direct.answers.map((a: any) => [a.type, a.name]));
    expect(through.answers[0].choice, message).toBe(direct.answers[0].choice);
    expect(typeof through.answers[0].choice, message).toBe("boolean");
    direct.answers.forEach((d: any, i: number) => {
      const g = through.answers[i];
      if (d.type === "predicate") expect(g.probability, message).toBeCloseTo(d.probability, CLOSE);
      else {
        expect(
          g.probabilities.map((p: any) => p.value),
          message,
        ).toEqual(d.probabilities.map((p: any) => p.value));
        g.probabilities.forEach((p: any, k: number) => expect(p.probability, message).toBeCloseTo(d.probabilities[k].probability, CLOSE));
        expect(g.confidence, message).toBeCloseTo(d.confidence, CLOSE);
      }
    });
    expect(through.usage, message).toEqual(direct.usage);
  });

  it("holds the upper bound and settles at the upstream's usage, on its own account", async () => {
    const gateway = await startGateway();
    const parsed = JSON.parse(BODY);
    const bound = (await gateway.engine.prepare(buildPrompt(parsed.state, Object.values(parsed.questions) as Question[]))).inputTokens;
    const upstreamBefore = await billingState(upstream, upstream.accountId);
    const tokens = okJson(await postJudgment(gateway, BODY)).usage.input_tokens;
    expect(tokens, `usage ${tokens} must be positive and below the bound ${bound}`).toBeGreaterThan(0);
    expect(tokens, `usage ${tokens} must be below the bound ${bound}`).toBeLessThan(bound);
    const state = await billingState(gateway, gateway.accountId);
    expect(state.entries.at(-1), JSON.stringify(state)).toMatchObject({
      kind: "charge",
      amountMicro: -chargeFor(tokens, PRICE),
      inputTokens: tokens,
      questions: 5,
    });
    expect(state, JSON.stringify(state)).toMatchObject({ balanceMicro: BALANCE - chargeFor(tokens, PRICE), reservedMicro: 0 });
    expect(await gateway.services.ledger.check(), "the gateway's ledger").toMatchObject({ ok: true });
    const upstreamAfter = await billingState(upstream, upstream.accountId);
    expect(upstreamAfter.entries.slice(upstreamBefore.entries.length), JSON.stringify(upstreamAfter)).toMatchObject([{ inputTokens: tokens, questions: 5 }]);
  });

  it("splits more questions than one call takes over several calls, and charges what they read together", async () => {
    const gateway = await startGateway({ questionsPerCall: 2 });
    const asked = standIn.decisions().length;
    const upstreamBefore = (await billingState(upstream, upstream.accountId)).entries.length;
    const direct = okJson(await postJudgment(upstream, BODY));
    const through = okJson(await postJudgment(gateway, BODY));
    expectSameAnswers(direct, through);
    const calls = standIn
      .decisions()
      .slice(asked)
      .map((r) => JSON.parse(r.body).questions.map((q: any) => q.name));
    expect(calls.sort(), JSON.stringify(calls)).toEqual([["q1", "q2"], ["q3", "q4"], ["q5"]]);
    // Each call reads the state again, and the upstream bills each: the client pays their sum.
    const billed = (await billingState(upstream, upstream.accountId)).entries.slice(upstreamBefore + 1).map((e) => e.inputTokens);
    expect(billed.length, JSON.stringify(billed)).toBe(3);
    expect(through.usage.input_tokens, JSON.stringify({ billed, through })).toBe(billed.reduce((a, b) => a + b, 0));
    expect(through.usage.input_tokens).toBeGreaterThan(direct.usage.input_tokens);
    const state = await billingState(gateway, gateway.accountId);
    expect(state.entries.at(-1), JSON.stringify(state)).toMatchObject({ amountMicro: -chargeFor(through.usage.input_tokens, PRICE) });
  });

  it("debiases as the upstream would (shift: one call per round, billed at their sum); include_logits works, x_diagnostics is refused", async () => {
    const gateway = await startGateway();
    const body = {
      state: "I was charged twice for order 1234.",
      questions: { topic: { type: "choice", instructions: "What is it about?", criteria: { billing: null, shipping: null, returns: null, other: null } } },
      x_debias: "shift",
    };
    const direct = okJson(await postJudgment(upstream, body));
    const upstreamBefore = (await billingState(upstream, upstream.accountId)).entries.length;
    const through = okJson(await postJudgment(gateway, body));
    expectSameAnswers(direct, through);
    expect(through.x_debias, JSON.stringify(through)).toEqual(direct.x_debias);
    const rounds = (await billingState(upstream, upstream.accountId)).entries.slice(upstreamBefore);
    expect(rounds.length, JSON.stringify(rounds)).toBeGreaterThan(1);
    expect(through.usage.input_tokens, JSON.stringify({ rounds, through })).toBe(rounds.reduce((sum, e) => sum + e.inputTokens, 0));

    const withLogits = okJson(await postJudgment(gateway, { ...body, x_debias: "none", include_logits: true }));
    expect(Object.keys(withLogits.answers.topic.logits), JSON.stringify(withLogits)).toEqual(["billing", "shipping", "returns", "other"]);
    const diagnostics = await postJudgment(gateway, { ...body, x_diagnostics: true });
    expectErrorResponse(diagnostics, 400, "invalid_request");
    expect(diagnostics.json.error, show(diagnostics)).toMatch(/x_diagnostics needs the in-process engine/);
  });

  it("takes the SDKs' base URL, ending in /v1, as well as the root", async () => {
    const gateway = await startGateway({ url: `${standIn.url}/v1` });
    const asked = standIn.decisions().length;
    okJson(await postJudgment(gateway, BODY));
    expect(
      standIn
        .decisions()
        .slice(asked)
        .map((r) => r.path),
    ).toEqual(["/v1/decisions"]);
  });
});
