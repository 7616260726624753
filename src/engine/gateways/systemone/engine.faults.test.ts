import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { chargeFor } from "../../../money/money.js";
import { buildPrompt } from "../../../judgment/prompt.js";
import type { Question } from "../../../judgment/schema.js";
import { billingState, moneyTables } from "../../../testing/billing-http.js";
import { postJudgment, show, type CapturedResponse } from "../../../testing/http-client.js";
import { expectErrorResponse, okJson } from "../../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../../testing/server.js";
import {
  mutatingHandler,
  realAnswer,
  startSystemOneStandIn,
  type StandInHandler,
  type SystemOneStandIn,
} from "../../../testing/standins/systemone-upstream.js";
import { createSystemOneEngine } from "./engine.js";

/**
 * The gateway against upstreams that answer wrongly: each broken answer (computed from a real
 * answer of a real instance, then broken one way) gives a 502 or, for the upstream's refusal of
 * the request itself, a 400; nothing is charged and nothing stays held.
 */

const KEY = "sk-gateway-secret-7f3a9c1e5b";
const PRICE = 50_000;
const BALANCE = 1_000_000_000;
const TIMEOUT_MS = 1_000;

let upstream: TestServer;
let standIn: SystemOneStandIn;
let gateway: TestServer;
let behaviour: StandInHandler = () => undefined;

beforeAll(async () => {
  upstream = await startTestServer();
  standIn = await startSystemOneStandIn((request) => behaviour(request), { prefix: "/api/v2" });
  gateway = await startGateway();
});

/** A gateway (its own engine, database and account) in front of the stand-in. */
async function startGateway(): Promise<TestServer> {
  const engine = createSystemOneEngine({
    server: { url: standIn.url, key: KEY, timeoutMs: TIMEOUT_MS },
    upstreamLimits: { options: 5, levels: 4, questions: 3 },
    maxRequestTokens: 100_000,
    contextSize: 8192,
  });
  await engine.ready;
  return startTestServer({ engine, plan: { allowanceQuestions: 0, pricePerMillion: PRICE }, balanceMicro: BALANCE });
}
beforeEach(() => {
  behaviour = () => undefined;
});
afterAll(async () => {
  await gateway?.close();
  await gateway?.engine.close();
  await standIn?.close();
  await upstream?.close();
});

const BODY = {
  state: "I was charged twice for order 1234.",
  questions: {
    topic: { type: "choice", instructions: "What is it about?", criteria: { billing: "money", shipping: null, other: "anything else" } },
    angry: { type: "noul", instructions: "The customer is angry." },
    urgency: { type: "score", instructions: "How urgent?", criteria: ["none", "some", "very"] },
  },
};
const BOUND_PROMPT = buildPrompt(BODY.state, Object.values(BODY.questions) as Question[]);

/** The real answer with this change (q1 = topic, q2 = angry, q3 = urgency, as the gateway numbers them). */
const breaking = (mutate: (body: any) => unknown) => mutatingHandler(upstream, mutate);
const answerAt =
  (status: number, body: unknown, delayMs?: number): StandInHandler =>
  (request) =>
    request.path === "/v1/systemone" ? { status, body, delayMs } : undefined;

/** Sends BODY through the gateway: the status and code, the stand-in asked once, nothing charged or held. */
async function expectUncharged(status: number, code: string, message?: RegExp): Promise<CapturedResponse> {
  const before = await moneyTables(gateway.database);
  const asked = standIn.judgments().length;
  const response = await postJudgment(gateway, BODY);
  expectErrorResponse(response, status, code);
  if (message) expect(response.json.error, show(response)).toMatch(message);
  expect(response.text, show(response)).not.toContain(KEY);
  expect(standIn.judgments().length - asked, show(response)).toBe(1);
  expect(await moneyTables(gateway.database), `charged or held\n${show(response)}`).toEqual(before);
  return response;
}

describe("broken answers give 502 model_failed, uncharged", () => {
  const probabilitiesOf = (body: any, id: string) => body.answers[id].probabilities;
  const cases: [string, (body: any) => unknown, RegExp][] = [
    ["wrong question ids", (b) => ({ ...b, answers: { q1: b.answers.q1, q2: b.answers.q2, topic: b.answers.q3 } }), /missing \["q3"\], unexpected \["topic"\]/],
    ["an extra probability key", (b) => void (probabilitiesOf(b, "q1").refund = 0), /unexpected \["refund"\]/],
    ["a missing probability key", (b) => void delete probabilitiesOf(b, "q3")["2"], /missing \["2"\]/],
    ["NaN written as null (a JavaScript upstream)", (b) => void (b.answers.q2.noul = null), /noul is null, not a probability/],
    ["a negative probability", (b) => void (probabilitiesOf(b, "q1").billing = -0.01), /"billing"\] is -0.01/],
    ["a probability above 1", (b) => void (b.answers.q2.noul = 1.2), /noul is 1.2/],
    [
      "probabilities that do not sum to 1",
      (b) => void Object.keys(probabilitiesOf(b, "q3")).forEach((k) => (probabilitiesOf(b, "q3")[k] *= 0.9)),
      /sum to 0.9/,
    ],
    ["a choice that is not the argmax", (b) => void (b.answers.q1.choice = lowest(probabilitiesOf(b, "q1"))), /below the top/],
    ["a score that is not the expectation (levels from 1)", (b) => void (b.answers.q3.score += 1), /not the expectation/],
    [
      "logits that contradict the probabilities",
      (b) => void (b.answers.q2.logits = { true: b.answers.q2.logits.false, false: b.answers.q2.logits.true }),
      /logits disagree/,
    ],
    ["a fractional usage", (b) => void (b.usage.input_tokens += 0.5), /usage.input_tokens is .*not a non-negative integer/],
    ["no usage", (b) => void delete b.usage, /usage is missing/],
  ];
  it.each(cases)("%s", async (_name, mutate, message) => {
    behaviour = breaking(mutate);
    await expectUncharged(502, "model_failed", message);
  });

  it("NaN as Python writes it (not JSON), malformed JSON, and a 500", async () => {
    behaviour = async (request) => {
      if (request.path !== "/v1/systemone") return undefined;
      const text = JSON.stringify((await realAnswer(upstream, request)).body);
      return { body: text.replace(/"noul":[0-9.e-]+/, '"noul":NaN') };
    };
    await expectUncharged(502, "model_failed", /not JSON/);
    behaviour = answerAt(200, '{"model":"m","answers":{"q1":');
    await expectUncharged(502, "model_failed", /not JSON/);
    behaviour = answerAt(500, { error: "CUDA error: out of memory" });
    await expectUncharged(502, "model_failed", /answered 500: CUDA error: out of memory/);
  });
});

describe("an upstream that is slow, refuses the key or the request", () => {
  it("gives 502 model_unavailable when it does not answer within the timeout", async () => {
    behaviour = answerAt(200, {}, TIMEOUT_MS * 3);
    await expectUncharged(502, "model_unavailable", new RegExp(`did not answer within ${TIMEOUT_MS} ms`));
  });

  it("gives 400 upstream_rejected quoting the upstream's message for its 400, 413 and 422", async () => {
    behaviour = answerAt(400, { error: "questions.q2.instructions: too long for this model" });
    await expectUncharged(
      400,
      "upstream_rejected",
      /refused the request: questions.q2.instructions: too long for this model \(it numbers the questions q1, q2/,
    );
    behaviour = answerAt(413, { detail: { error_type: "max_tokens_exceeded", message: "over 64k tokens" } });
    await expectUncharged(400, "upstream_rejected", /over 64k tokens/);
    behaviour = answerAt(422, { detail: "state: field required" });
    await expectUncharged(400, "upstream_rejected", /state: field required/);
  });

  it("gives 502 for its 401, and never shows the key, even one the upstream echoes", async () => {
    behaviour = answerAt(401, { error: `invalid API key ${KEY}` });
    // The client is told it is not its fault, and nothing of the gateway's settings; the log says which.
    const unavailable = await expectUncharged(502, "model_unavailable", /^the model's server is unavailable; nothing was charged$/);
    expect(gateway.logLines.join("\n"), show(unavailable)).toMatch(/refused this gateway's key \(check JUDGE_ENGINE_KEY\)/);
    behaviour = answerAt(400, { error: `key ${KEY} may not use this model` });
    const rejected = await expectUncharged(400, "upstream_rejected", /key \[key\] may not use this model/);
    expect(gateway.logLines.join("\n"), show(rejected)).not.toContain(KEY);
  });

  it("gives 502 model_unavailable for its 402 and 429, model_failed for other statuses", async () => {
    behaviour = answerAt(402, { error: "balance too low" });
    await expectUncharged(502, "model_unavailable", /^the model's server is unavailable; nothing was charged$/);
    expect(gateway.logLines.join("\n")).toMatch(/upstream account cannot pay: balance too low/);
    behaviour = answerAt(429, { error: "rate limit of 1200 requests per minute reached" });
    await expectUncharged(502, "model_unavailable", /429: rate limit/);
    behaviour = answerAt(409, { error: "conflict" });
    await expectUncharged(502, "model_failed", /409: conflict/);
  });
});

describe("answers the gateway accepts", () => {
  it("sends the upstream the original questions under q1…, with the model and its key, below the path prefix", async () => {
    behaviour = breaking(() => undefined);
    okJson(await postJudgment(gateway, BODY));
    const sent = standIn.judgments().at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.headers["idempotency-key"]).toBeUndefined();
    expect(JSON.parse(sent.body), sent.body).toEqual({
      model: "jev-latest",
      state: BODY.state,
      questions: { q1: BODY.questions.topic, q2: BODY.questions.angry, q3: BODY.questions.urgency },
      include_logits: true,
    });
  });

  it("uses the probabilities of an upstream without the logits extension, renormalising a tiny drift", async () => {
    const direct = okJson(await postJudgment(upstream, BODY));
    const drift = 4e-4;
    behaviour = breaking((b) => {
      for (const answer of Object.values<any>(b.answers)) delete answer.logits;
      b.answers.q1.probabilities.billing += drift;
    });
    const through = okJson(await postJudgment(gateway, BODY));
    const message = JSON.stringify({ direct, through });
    const sum = 1 + drift;
    for (const [key, p] of Object.entries<number>(direct.answers.topic.probabilities)) {
      expect(through.answers.topic.probabilities[key], message).toBeCloseTo((p + (key === "billing" ? drift : 0)) / sum, 12);
    }
    expect(through.answers.angry.noul, message).toBeCloseTo(direct.answers.angry.noul, 12);
    expect(through.answers.urgency.score, message).toBeCloseTo(direct.answers.urgency.score, 12);
  });

  it("asks a strict upstream that refuses include_logits again without it, and from then on only without it", async () => {
    const strict = breaking(() => undefined);
    behaviour = (request) => {
      if (request.path === "/v1/systemone" && JSON.parse(request.body).include_logits !== undefined) {
        return { status: 422, body: { detail: [{ type: "extra_forbidden", loc: ["body", "include_logits"], msg: "Extra inputs are not permitted" }] } };
      }
      return strict(request);
    };
    // A gateway of its own: what it learns about this upstream must not change the other tests'.
    const own = await startGateway();
    try {
      const asked = standIn.judgments().length;
      const direct = okJson(await postJudgment(upstream, BODY));
      const first = okJson(await postJudgment(own, BODY));
      const second = okJson(await postJudgment(own, BODY));
      const sent = standIn
        .judgments()
        .slice(asked)
        .map((r) => "include_logits" in JSON.parse(r.body));
      expect(sent, JSON.stringify({ first, second })).toEqual([true, false, false]);
      for (const through of [first, second]) expect(through.answers.topic.choice, JSON.stringify({ direct, through })).toBe(direct.answers.topic.choice);
    } finally {
      await own.close();
      await own.engine.close();
    }
  });

  it("rebuilds the answer: the upstream's extra fields, model and confidence do not pass through", async () => {
    behaviour = breaking((b) => {
      b.model = "upstream-secret-model";
      b.x_label_mass = 0.93;
      b.answers.q1.confidence = 0.99;
      b.answers.q1.diagnostics = { label_mass: 0.93 };
    });
    const through = okJson(await postJudgment(gateway, BODY));
    const text = JSON.stringify(through);
    expect(through.model, text).toBe(gateway.engine.modelId);
    expect(text).not.toMatch(/x_label_mass|diagnostics|upstream-secret-model/);
    expect(through.answers.topic.confidence, text).not.toBe(0.99);
  });

  it("charges at most the bound when the upstream reports more tokens than it", async () => {
    const bound = (await gateway.engine.prepare(BOUND_PROMPT)).inputTokens;
    behaviour = breaking((b) => void (b.usage.input_tokens = bound * 10));
    const before = (await billingState(gateway, gateway.accountId)).balanceMicro;
    const through = okJson(await postJudgment(gateway, BODY));
    expect(through.usage.input_tokens, JSON.stringify(through)).toBe(bound);
    const after = await billingState(gateway, gateway.accountId);
    expect(before - after.balanceMicro, JSON.stringify(after)).toBe(chargeFor(bound, PRICE));
  });
});

describe("over the upstream's limits", () => {
  const over: [string, unknown][] = [
    ["options", { type: "choice", instructions: "Which?", criteria: Object.fromEntries("abcdef".split("").map((k) => [k, null])) }],
    ["levels", { type: "score", instructions: "How much?", criteria: ["0", "1", "2", "3", "4"] }],
  ];
  it.each(over)("refuses too many %s with 400 over_upstream_limit, sending and holding nothing", async (_what, question) => {
    behaviour = breaking(() => undefined);
    const before = await moneyTables(gateway.database);
    const asked = standIn.judgments().length;
    const response = await postJudgment(gateway, { state: "s", questions: { fine: { type: "noul", instructions: "x" }, "too big": question } });
    expectErrorResponse(response, 400, "over_upstream_limit");
    expect(response.json.error, show(response)).toContain("too big");
    expect(standIn.judgments().length, show(response)).toBe(asked);
    expect(await moneyTables(gateway.database), show(response)).toEqual(before);
  });

  it("refuses too many questions the same way", async () => {
    const asked = standIn.judgments().length;
    const questions = Object.fromEntries(["a", "b", "c", "d"].map((id) => [id, { type: "noul", instructions: id }]));
    const response = await postJudgment(gateway, { state: "s", questions });
    expectErrorResponse(response, 400, "over_upstream_limit");
    expect(standIn.judgments().length, show(response)).toBe(asked);
  });
});

function lowest(probabilities: Record<string, number>): string {
  return Object.entries(probabilities).sort((a, b) => a[1] - b[1])[0][0];
}
