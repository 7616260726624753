import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { billingHeadersOf, billingState, moneyTables, useBillingServers } from "../../testing/billing-http.js";
import { expectedCharge, expectedEuros } from "../../testing/billing-store.js";
import { postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { startTestServer, type TestServer } from "../../testing/server.js";
import { decisionsBody, expectDecisionsError, postDecisions } from "./test-helpers.js";

/** POST /v1/decisions on the real tiny model: the format's answers, parity with /v1/systemone, billing, idempotency. */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

function ok(response: CapturedResponse): any {
  expect(response.status, show(response)).toBe(200);
  expect(response.headers.get("content-type") ?? "", show(response)).toMatch(/^application\/json/);
  return response.json;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe("answers in the Decisions format", () => {
  it("predicate, choice (string and boolean values) and score: in request order, values typed, names echoed", async () => {
    const response = await postDecisions(server, {
      model: "gpt-6-luna",
      input: "I was charged twice for one order and nobody answers my emails.",
      questions: [
        {
          type: "score",
          name: "urgency",
          instructions: "How urgent is it?",
          levels: [{ label: "low" }, { label: "medium", description: "this week" }, { label: "high" }],
        },
        { type: "predicate", name: "angry", instructions: "The customer is angry." },
        { type: "choice", instructions: "Refund?", choices: [{ value: true, description: "refund now" }, { value: false }] },
        {
          type: "choice",
          name: "topic",
          instructions: "What is it about?",
          choices: [{ value: "billing" }, { value: "tech", description: "a bug" }, { value: "account" }],
        },
      ],
      safety_identifier: "user-17",
      prompt_cache_key: "support",
      prompt_cache_options: { mode: "implicit", ttl: "30m" },
    });
    const body = ok(response);
    expect(Object.keys(body), show(response)).toEqual(["model", "answers", "usage"]);
    expect(body.model, show(response)).toBe(server.engine.modelId);
    const [score, angry, refund, topic] = body.answers;
    expect(
      body.answers.map((a: any) => [a.type, a.name]),
      show(response),
    ).toEqual([
      ["score", "urgency"],
      ["predicate", "angry"],
      ["choice", null],
      ["choice", "topic"],
    ]);

    expect(
      score.probabilities.map((p: any) => [p.value, p.label]),
      show(response),
    ).toEqual([
      [0, "low"],
      [1, "medium"],
      [2, "high"],
    ]);
    expect(sum(score.probabilities.map((p: any) => p.probability)), show(response)).toBeCloseTo(1, 12);
    expect(score.score, show(response)).toBeCloseTo(sum(score.probabilities.map((p: any) => p.value * p.probability)), 12);
    expect(angry.probability, show(response)).toBeGreaterThan(0);
    expect(angry.probability, show(response)).toBeLessThan(1);

    expect(
      refund.probabilities.map((p: any) => p.value),
      show(response),
    ).toEqual([true, false]);
    expect(typeof refund.choice, show(response)).toBe("boolean");
    const top = refund.probabilities.reduce((a: any, b: any) => (b.probability > a.probability ? b : a));
    expect(refund.choice, show(response)).toBe(top.value);
    expect(
      topic.probabilities.map((p: any) => p.value),
      show(response),
    ).toEqual(["billing", "tech", "account"]);
    expect(typeof topic.choice, show(response)).toBe("string");
    expect(sum(topic.probabilities.map((p: any) => p.probability)), show(response)).toBeCloseTo(1, 12);
    for (const answer of [score, refund, topic]) expect(answer.confidence, show(response)).toBeGreaterThanOrEqual(0);

    expect(body.usage, show(response)).toEqual({
      input_tokens: expect.any(Number),
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: body.usage.input_tokens,
    });
    expect(body.usage.input_tokens, show(response)).toBeGreaterThan(0);
  });

  it("accepts the served model's id and the alias, and answers with the served id either way", async () => {
    for (const model of [server.engine.modelId, "gpt-6-luna"]) {
      const response = await postDecisions(server, { ...decisionsBody(1), model });
      expect(ok(response).model, show(response)).toBe(server.engine.modelId);
    }
  });

  it("answers 255 choices and 10 levels, each listed in request order", async () => {
    const values = Array.from({ length: 255 }, (_, i) => (i === 7 ? true : i === 8 ? false : `option ${254 - i}`));
    const response = await postDecisions(server, {
      model: "gpt-6-luna",
      input: "pick one",
      questions: [
        { type: "choice", instructions: "Which?", choices: values.map((value) => ({ value })) },
        { type: "score", instructions: "How much?", levels: Array.from({ length: 10 }, (_, i) => ({ label: `level ${i}` })) },
      ],
    });
    const [choice, score] = ok(response).answers;
    expect(
      choice.probabilities.map((p: any) => p.value),
      show(response),
    ).toEqual(values);
    expect(
      score.probabilities.map((p: any) => p.label),
      show(response),
    ).toEqual(Array.from({ length: 10 }, (_, i) => `level ${i}`));
  });
});

describe("the same question through either route gets the same probabilities", () => {
  const state = "I was charged twice.";
  const systemOne = {
    state,
    questions: {
      c: { type: "choice", instructions: "Topic?", criteria: { billing: "money", true: null, tech: "a bug" } },
      n: { type: "noul", instructions: "The customer is angry." },
      s: { type: "score", instructions: "How urgent?", criteria: ["low", "high: answer today"] },
    },
  };
  const decisions = {
    model: "gpt-6-luna",
    input: state,
    questions: [
      {
        type: "choice",
        instructions: "Topic?",
        choices: [{ value: "billing", description: "money" }, { value: true }, { value: "tech", description: "a bug" }],
      },
      { type: "predicate", instructions: "The customer is angry." },
      { type: "score", instructions: "How urgent?", levels: [{ label: "low" }, { label: "high", description: "answer today" }] },
    ],
  };

  /** Both answers side by side as [choice probabilities by key, P(true), score probabilities, tokens]. */
  async function both(s: TestServer, one: object, other: object) {
    const a = await postJudgment(s, one);
    const b = await postDecisions(s, other);
    const ours = ok(a);
    const theirs = ok(b);
    const message = `${show(a)}\n${show(b)}`;
    return {
      message,
      ours: [ours.answers.c.probabilities, ours.answers.n.noul, Object.values(ours.answers.s.probabilities), ours.usage.input_tokens],
      theirs: [
        Object.fromEntries(theirs.answers[0].probabilities.map((p: any) => [String(p.value), p.probability])),
        theirs.answers[1].probability,
        theirs.answers[2].probabilities.map((p: any) => p.probability),
        theirs.usage.input_tokens,
      ],
    };
  }

  it("a string input and a string state", async () => {
    const { message, ours, theirs } = await both(server, systemOne, decisions);
    expect(theirs, message).toEqual(ours);
  });

  it("user messages' text parts and the state they join into", async () => {
    const input = [
      { role: "user", content: "I was charged twice." },
      { role: "user", content: [{ type: "input_text", text: "Order 17." }] },
    ];
    const { message, ours, theirs } = await both(server, { ...systemOne, state: "I was charged twice.\n\nOrder 17." }, { ...decisions, input });
    expect(theirs, message).toEqual(ours);
  });

  it("a lone JSON part and the same JSON state, numbers as written", async () => {
    const data = '{"order":17,"amount":1.50,"id":123456789012345678901234567890,"notes":["late","twice"]}';
    const one = `{"state":${data},"questions":${JSON.stringify(systemOne.questions)}}`;
    const other = `{"model":"gpt-6-luna","input":[{"role":"user","content":[{"type":"input_json","data":${data}}]}],"questions":${JSON.stringify(decisions.questions)}}`;
    const { message, ours, theirs } = await both(server, one as never, other as never);
    expect(theirs, message).toEqual(ours);
  });

  for (const mode of ["canonical", "shift"] as const) {
    it(`x_debias ${mode} on both`, async () => {
      const { message, ours, theirs } = await both(server, { ...systemOne, x_debias: mode }, { ...decisions, x_debias: mode });
      expect(theirs, message).toEqual(ours);
    });
  }
});

describe("billing and idempotency, as on /v1/systemone", () => {
  const billing = useBillingServers();

  it("bills usage.input_tokens, with the billing headers; the balance pays past the allowance", async () => {
    const s = await billing.server({ plan: { allowanceQuestions: 2, pricePerMillion: 1_000_000, requestsPerMinute: 100 }, balanceMicro: 10_000 });
    const first = await postDecisions(s, decisionsBody(2));
    const second = await postDecisions(s, decisionsBody(1));
    const tokens = [ok(first).usage.input_tokens, ok(second).usage.input_tokens];
    expect([billingHeadersOf(first), billingHeadersOf(second)], `${show(first)}\n${show(second)}`).toEqual([
      {
        "x-billed-to": "plan",
        "x-plan-usage": "100%",
        "x-balance-remaining": expectedEuros(10_000),
        "x-ratelimit-limit": "100",
        "x-ratelimit-remaining": "99",
        "x-ratelimit-reset": "60",
        "retry-after": null,
      },
      {
        "x-billed-to": "balance",
        "x-plan-usage": "100%",
        "x-balance-remaining": expectedEuros(10_000 - expectedCharge(tokens[1], 1_000_000)),
        "x-ratelimit-limit": "100",
        "x-ratelimit-remaining": "98",
        "x-ratelimit-reset": "60",
        "retry-after": null,
      },
    ]);
    const entries = (await billingState(s, s.accountId)).entries.filter((e) => e.kind !== "top_up");
    expect(
      entries.map((e) => [e.kind, e.questions, e.inputTokens, e.amountMicro]),
      JSON.stringify(entries),
    ).toEqual([
      ["plan", 2, tokens[0], 0],
      ["charge", 1, tokens[1], -expectedCharge(tokens[1], 1_000_000)],
    ]);
  });

  it("an Idempotency-Key replays the first answer byte for byte and charges once; another body with it is a 400", async () => {
    const s = await billing.server({ plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 10_000 });
    const headers = { "idempotency-key": "decide-1" };
    const first = await postDecisions(s, decisionsBody(2), { headers });
    ok(first);
    const afterFirst = await moneyTables(s.database);
    const replay = await postDecisions(s, decisionsBody(2), { headers });
    const message = `${show(first)}\n${show(replay)}`;
    expect([replay.status, replay.text, replay.headers.get("idempotent-replayed")], message).toEqual([200, first.text, "true"]);
    expect(replay.headers.get("x-balance-remaining"), message).toBe(first.headers.get("x-balance-remaining"));
    expect(await moneyTables(s.database), "the replay charged nothing").toEqual(afterFirst);
    expectDecisionsError(await postDecisions(s, decisionsBody(1), { headers }), 400, "idempotency_key_reused");
    expectDecisionsError(await postDecisions(s, decisionsBody(1), { headers: { "idempotency-key": "has space" } }), 400, "invalid_idempotency_key");
    expect(await moneyTables(s.database), "refusals charged nothing").toEqual(afterFirst);
  });
});
