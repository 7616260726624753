import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildPrompt } from "../../../judgment/prompt.js";
import type { Question } from "../../../judgment/schema.js";
import { chargeFor } from "../../../money/money.js";
import { expectDecisionsError, postDecisions } from "../../../routes/decisions/test-helpers.js";
import { billingState, moneyTables } from "../../../testing/billing-http.js";
import { postJudgment, show, type CapturedResponse } from "../../../testing/http-client.js";
import { expectErrorResponse, okJson } from "../../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../../testing/server.js";
import { openAIError, startDecisionsStandIn, STAND_IN_KEY, type DecisionsFault, type DecisionsStandIn } from "../../../testing/standins/decisions-upstream.js";
import { createDecisionsEngine } from "./engine.js";

/**
 * The decisions gateway against a Decisions server broken one way at a time (the stand-in: real
 * answers of a real instance, then broken): every fault gives its documented status, nothing is
 * charged or held, and a 502 tells the client nothing of the gateway's settings (the upstream's
 * URL, its key) nor the upstream's own words; the log says what happened.
 */

const PRICE = 50_000;
const BALANCE = 1_000_000_000;
const TIMEOUT_MS = 1_000;

let upstream: TestServer;
let standIn: DecisionsStandIn;
let gateway: TestServer;

beforeAll(async () => {
  upstream = await startTestServer();
  standIn = await startDecisionsStandIn(upstream, { prefix: "/api" });
  gateway = await startGateway(standIn.url);
});
beforeEach(() => {
  standIn.fault = { kind: "none" };
});
afterAll(async () => {
  await gateway?.close();
  await gateway?.engine.close();
  await standIn?.close();
  await upstream?.close();
});

/** `ready: false` for an upstream that never answers (ready waits for a first answer). */
async function startGateway(url: string, options: { ready?: boolean } = {}): Promise<TestServer> {
  const engine = createDecisionsEngine({
    server: { url, key: STAND_IN_KEY, timeoutMs: TIMEOUT_MS },
    upstreamLimits: { options: 5, levels: 4, questions: 64 },
    maxRequestTokens: 100_000,
    contextSize: 8192,
  });
  if (options.ready !== false) await engine.ready;
  return startTestServer({ engine, plan: { allowanceQuestions: 0, pricePerMillion: PRICE }, balanceMicro: BALANCE });
}

const BODY = {
  state: "I was charged twice for order 1234.",
  questions: {
    topic: { type: "choice", instructions: "What is it about?", criteria: { billing: "money", shipping: null, other: "anything else" } },
    angry: { type: "noul", instructions: "The customer is angry." },
    urgency: { type: "score", instructions: "How urgent?", criteria: ["none", "some", "very"] },
  },
};

/** Sends BODY through the gateway: the status and code, the upstream asked once, nothing charged or held, no setting shown. */
async function expectUncharged(status: number, code: string, message?: RegExp): Promise<CapturedResponse> {
  const before = await moneyTables(gateway.database);
  const asked = standIn.decisions().length;
  const response = await postJudgment(gateway, BODY);
  expectErrorResponse(response, status, code);
  if (message) expect(response.json.error, show(response)).toMatch(message);
  expect(response.text, show(response)).not.toContain(STAND_IN_KEY);
  if (status === 502) expect(response.text, show(response)).not.toMatch(/127\.0\.0\.1|\/api|JUDGE_|upstream says/);
  expect(standIn.decisions().length - asked, show(response)).toBe(1);
  expect(await moneyTables(gateway.database), `charged or held\n${show(response)}`).toEqual(before);
  return response;
}

const mutate = (change: (body: any) => unknown): DecisionsFault => ({ kind: "mutate", mutate: change });
const unusable = (detail: RegExp) => new RegExp(`^the model's server answered something unusable: .*${detail.source}.*; nothing was charged$`);

describe("broken answers give 502 model_failed, uncharged, saying what was wrong", () => {
  const cases: [string, (body: any) => unknown, RegExp][] = [
    ["an answer missing", (b) => void b.answers.pop(), /gave 2 answers to 3 questions/],
    ["answers out of order", (b) => void b.answers.reverse(), /answer to q1 is named "q3": answers out of order/],
    ["answers keyed like System One's", (b) => ({ ...b, answers: { q1: b.answers[0], q2: b.answers[1], q3: b.answers[2] } }), /answers are .* not an array/],
    ["an answer of another type", (b) => void (b.answers[1].type = "choice"), /q2 has type "choice", not predicate/],
    ["an extra choice", (b) => void b.answers[0].probabilities.push({ value: "refund", probability: 0 }), /4 entries, not one per choice \(3\)/],
    ["choices in another order", (b) => void b.answers[0].probabilities.reverse(), /probabilities\[0\] is for "other", not "billing"/],
    ["a boolean for a string value", (b) => void (b.answers[0].probabilities[0].value = true), /probabilities\[0\] is for true, not "billing"/],
    ["levels numbered from 1", (b) => b.answers[2].probabilities.forEach((p: any) => (p.value += 1)), /probabilities\[0\] is for 1, not 0/],
    ["a level's label changed", (b) => void (b.answers[2].probabilities[1].label = "medium"), /label "medium", not "some"/],
    ["NaN written as null", (b) => void (b.answers[1].probability = null), /q2: probability is null, not a probability/],
    ["a negative probability", (b) => void (b.answers[0].probabilities[0].probability = -0.01), /is -0.01, not a probability/],
    ["a probability above 1", (b) => void (b.answers[1].probability = 1.2), /is 1.2, not a probability/],
    ["probabilities that do not sum to 1", (b) => b.answers[2].probabilities.forEach((p: any) => (p.probability *= 0.9)), /sum to 0.9/],
    ["a choice that is not the top value", (b) => void (b.answers[0].choice = lowest(b.answers[0].probabilities)), /below the top/],
    ["a choice that is not a choice", (b) => void (b.answers[0].choice = "refund"), /choice "refund" is not one of the choices/],
    ["a score that is not the expectation", (b) => void (b.answers[2].score += 1), /not the expectation/],
    ["a confidence missing", (b) => void delete b.answers[0].confidence, /confidence is missing/],
    ["a fractional usage", (b) => void (b.usage.input_tokens += 0.5), /usage.input_tokens is .* not a non-negative integer/],
    ["no usage", (b) => void delete b.usage, /usage is missing/],
    ["no model", (b) => void delete b.model, /model is missing/],
    ["an array for the answer", (b) => [b], /answer is .* not an object/],
  ];
  it.each(cases)("%s", async (_name, change, detail) => {
    standIn.fault = mutate(change);
    await expectUncharged(502, "model_failed", unusable(detail));
  });

  it("NaN as Python writes it, malformed JSON, a 500 (its words logged, not shown)", async () => {
    standIn.fault = { kind: "text", text: '{"model":"m","answers":[{"type":"predicate","name":"q2","probability":NaN}]}' };
    await expectUncharged(502, "model_failed", /^the model's server answered something unusable \(not JSON\); nothing was charged$/);
    standIn.fault = { kind: "text", text: '{"model":"m","answers":[' };
    await expectUncharged(502, "model_failed", /not JSON/);
    standIn.fault = { kind: "status", status: 500, body: openAIError("upstream says: CUDA error: out of memory", null, null, "server_error") };
    const failed = await expectUncharged(502, "model_failed", /^the model's server failed; nothing was charged$/);
    expect(gateway.logLines.join("\n"), show(failed)).toMatch(/\/api\/v1\/decisions answered 500: upstream says: CUDA error: out of memory/);
  });
});

describe("an upstream that refuses, is slow or cannot be reached", () => {
  const plain = /^the model's server is unavailable; nothing was charged$/;

  it("gives a plain 502 model_unavailable for a refused key, and never shows or logs the key it echoes", async () => {
    standIn.fault = { kind: "refuse-key" };
    const response = await expectUncharged(502, "model_unavailable", plain);
    const log = gateway.logLines.join("\n");
    expect(log, show(response)).toMatch(
      /\/api\/v1\/decisions answered 401: it refused this gateway's key \(check JUDGE_ENGINE_KEY\): Incorrect API key provided: \[key\]/,
    );
    expect(log, show(response)).not.toContain(STAND_IN_KEY);
  });

  it("gives a plain 502 model_unavailable for its 402, 404, 408, 429, 502, 503, 504 and a refused model name", async () => {
    for (const status of [402, 404, 408, 429, 502, 503, 504]) {
      standIn.fault = { kind: "status", status, body: openAIError(`upstream says ${status}`, null) };
      await expectUncharged(502, "model_unavailable", plain);
    }
    standIn.fault = { kind: "status", status: 404, body: openAIError("The model `gpt-6-luna` does not exist", "model_not_found", "model") };
    await expectUncharged(502, "model_unavailable", plain);
    expect(gateway.logLines.join("\n")).toMatch(/does not serve the model this gateway names \(check JUDGE_ENGINE_MODEL\)/);
  });

  it("gives 502 model_failed for statuses that mean nothing here (409)", async () => {
    standIn.fault = { kind: "status", status: 409, body: openAIError("conflict", null) };
    await expectUncharged(502, "model_failed", /^the model's server failed; nothing was charged$/);
  });

  it("gives a plain 502 model_unavailable when it does not answer within the timeout", async () => {
    standIn.fault = { kind: "delay", ms: TIMEOUT_MS * 3 };
    await expectUncharged(502, "model_unavailable", plain);
    expect(gateway.logLines.join("\n")).toMatch(new RegExp(`did not answer within ${TIMEOUT_MS} ms`));
  });

  it("gives a plain 502 model_unavailable when nothing listens there", async () => {
    const nowhere = await startGateway("http://127.0.0.1:9/nowhere", { ready: false });
    try {
      const before = await moneyTables(nowhere.database);
      const response = await postJudgment(nowhere, BODY);
      expectErrorResponse(response, 502, "model_unavailable");
      expect(response.json.error, show(response)).toMatch(plain);
      expect(await moneyTables(nowhere.database), show(response)).toEqual(before);
    } finally {
      await nowhere.close();
      await nowhere.engine.close();
    }
  });

  it("gives 400 upstream_rejected quoting its 400, 413 and 422 (the key scrubbed), uncharged", async () => {
    standIn.fault = {
      kind: "status",
      status: 400,
      body: openAIError(`questions[1].instructions: too long for key ${STAND_IN_KEY}`, "invalid_request", "questions[1].instructions"),
    };
    await expectUncharged(
      400,
      "upstream_rejected",
      /refused the request: questions\[1\].instructions: too long for key \[key\] \(it numbers the questions q1, q2/,
    );
    standIn.fault = { kind: "status", status: 413, body: { error: "over 64k tokens" } };
    await expectUncharged(400, "upstream_rejected", /over 64k tokens/);
    standIn.fault = { kind: "status", status: 422, body: { detail: "input: field required" } };
    await expectUncharged(400, "upstream_rejected", /input: field required/);
  });

  it("gives 400 upstream_rejected, uncharged, when the upstream model declines a question (a refusal answer)", async () => {
    standIn.fault = mutate((b) => void (b.answers[1] = { type: "refusal", name: "q2" }));
    await expectUncharged(400, "upstream_rejected", /upstream model declined to answer question q2/);
  });

  it("answers /v1/decisions clients in their error shape", async () => {
    standIn.fault = { kind: "refuse-key" };
    const response = await postDecisions(gateway, { model: "gpt-6-luna", input: "x", questions: [{ type: "predicate", instructions: "y" }] });
    expectDecisionsError(response, 502, "model_unavailable");
    expect(response.json.error.type, show(response)).toBe("server_error");
  });
});

describe("answers the gateway accepts", () => {
  it("sends the questions in the Decisions format, named q1…, with the model and its key, below the path prefix", async () => {
    okJson(await postJudgment(gateway, BODY));
    const sent = standIn.decisions().at(-1)!;
    expect(sent.path).toBe("/v1/decisions");
    expect(sent.headers.authorization).toBe(`Bearer ${STAND_IN_KEY}`);
    expect(sent.headers["idempotency-key"]).toBeUndefined();
    expect(JSON.parse(sent.body), sent.body).toEqual({
      model: "gpt-6-luna",
      input: BODY.state,
      questions: [
        {
          type: "choice",
          name: "q1",
          instructions: "What is it about?",
          choices: [{ value: "billing", description: "money" }, { value: "shipping" }, { value: "other", description: "anything else" }],
        },
        { type: "predicate", name: "q2", instructions: "The customer is angry." },
        { type: "score", name: "q3", instructions: "How urgent?", levels: [{ label: "none" }, { label: "some" }, { label: "very" }] },
      ],
    });
  });

  it("renormalises a tiny drift, and rebuilds the answer: extra fields and the upstream's confidence do not pass through", async () => {
    const direct = okJson(await postJudgment(upstream, BODY));
    const drift = 4e-4;
    standIn.fault = mutate((b) => {
      b.model = "upstream-secret-model";
      b.x_label_mass = 0.93;
      b.answers[0].confidence = 0.99;
      b.answers[0].diagnostics = { label_mass: 0.93 };
      b.answers[0].probabilities[0].probability += drift;
    });
    const through = okJson(await postJudgment(gateway, BODY));
    const text = JSON.stringify({ direct, through });
    expect(JSON.stringify(through)).not.toMatch(/x_label_mass|diagnostics|upstream-secret-model/);
    expect(through.answers.topic.confidence, text).not.toBe(0.99);
    for (const [key, p] of Object.entries<number>(direct.answers.topic.probabilities)) {
      expect(through.answers.topic.probabilities[key], text).toBeCloseTo((p + (key === "billing" ? drift : 0)) / (1 + drift), 12);
    }
  });

  it("charges at most the bound when the upstream reports more tokens than it", async () => {
    const bound = (await gateway.engine.prepare(buildPrompt(BODY.state, Object.values(BODY.questions) as Question[]))).inputTokens;
    standIn.fault = mutate((b) => void (b.usage.input_tokens = bound * 10));
    const before = (await billingState(gateway, gateway.accountId)).balanceMicro;
    const through = okJson(await postJudgment(gateway, BODY));
    expect(through.usage.input_tokens, JSON.stringify(through)).toBe(bound);
    const after = await billingState(gateway, gateway.accountId);
    expect(before - after.balanceMicro, JSON.stringify(after)).toBe(chargeFor(bound, PRICE));
    expect(await gateway.services.ledger.check()).toMatchObject({ ok: true });
  });

  it("refuses more options or levels than the upstream takes with 400 over_upstream_limit, sending and holding nothing", async () => {
    const before = await moneyTables(gateway.database);
    const asked = standIn.decisions().length;
    const criteria = Object.fromEntries("abcdef".split("").map((k) => [k, null]));
    const response = await postJudgment(gateway, {
      state: "s",
      questions: { fine: { type: "noul", instructions: "x" }, "too big": { type: "choice", instructions: "Which?", criteria } },
    });
    expectErrorResponse(response, 400, "over_upstream_limit");
    expect(response.json.error, show(response)).toContain("too big");
    expect(standIn.decisions().length, show(response)).toBe(asked);
    expect(await moneyTables(gateway.database), show(response)).toEqual(before);
  });
});

function lowest(probabilities: { value: string; probability: number }[]): string {
  return [...probabilities].sort((a, b) => a.probability - b.probability)[0].value;
}
