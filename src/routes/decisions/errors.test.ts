import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { billingHeadersOf, moneyTables, useBillingServers } from "../../testing/billing-http.js";
import { evaluateFailsEngine, unavailableEngine } from "../../testing/fault-engines.js";
import { hangingEngine } from "../../testing/hanging-engine.js";
import { show } from "../../testing/http-client.js";
import { startTestServer, type TestServer } from "../../testing/server.js";
import { decisionsBody, expectDecisionsError, postDecisions } from "./test-helpers.js";

/**
 * POST /v1/decisions: every way a request is refused, in OpenAI's error shape with the
 * catalogue's statuses and codes (400, 401, 402, 409, 413, 415, 429, 502), never a 5xx for a bad
 * request, never a charge for a refusal.
 */

let server: TestServer;
let small: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  small = await startTestServer({ maxQuestions: 3 });
});
afterAll(async () => {
  await server?.close();
  await small?.close();
});

const predicate = { type: "predicate", instructions: "It is urgent." };
const choices = (n: number) => Array.from({ length: n }, (_, i) => ({ value: `option ${i}` }));
const levels = (n: number) => Array.from({ length: n }, (_, i) => ({ label: `level ${i}` }));
const ask = (question: unknown, extra: object = {}) => ({ model: "gpt-6-luna", input: "a state", questions: [question], ...extra });
const image = { type: "input_image", image_url: "https://example.com/cat.png" };

const BAD_REQUESTS: [name: string, body: unknown, code: string, param: string | null][] = [
  ["a body that is not JSON", "{ questions: nope", "invalid_json", null],
  ["an empty body", "", "invalid_json", null],
  ["a JSON array", [ask(predicate)], "invalid_request", null],
  ["JSON null", null, "invalid_request", null],
  ["no model", { input: "x", questions: [predicate] }, "invalid_request", "model"],
  ["model as a number", ask(predicate, { model: 4 }), "invalid_request", "model"],
  ["an unknown model", ask(predicate, { model: "gpt-4o" }), "unknown_model", "model"],
  ["/v1/systemone's alias, which is not this route's", ask(predicate, { model: "jev-latest" }), "unknown_model", "model"],
  ["no input", { model: "gpt-6-luna", questions: [predicate] }, "invalid_request", "input"],
  ["input as a number", ask(predicate, { input: 7 }), "invalid_request", "input"],
  ["no questions", { model: "gpt-6-luna", input: "x" }, "invalid_request", "questions"],
  ["empty questions", ask(predicate, { questions: [] }), "invalid_request", "questions"],
  ["questions as an object (the /v1/systemone shape)", ask(predicate, { questions: { q: predicate } }), "invalid_request", "questions"],
  ["an unknown question type", ask({ ...predicate, type: "noul" }), "invalid_request", "questions[0].type"],
  ["a question without instructions", ask({ type: "predicate" }), "invalid_request", "questions[0].instructions"],
  ["instructions as a number", ask({ type: "predicate", instructions: 42 }), "invalid_request", "questions[0].instructions"],
  ["a name that is not a string", ask({ ...predicate, name: 3 }), "invalid_request", "questions[0].name"],
  ["a choice with 1 choice", ask({ type: "choice", instructions: "?", choices: choices(1) }), "invalid_request", "questions[0].choices"],
  ["a choice with 256 choices", ask({ type: "choice", instructions: "?", choices: choices(256) }), "invalid_request", "questions[0].choices"],
  [
    "a choice value that is a number",
    ask({ type: "choice", instructions: "?", choices: [{ value: 1 }, { value: "b" }] }),
    "invalid_request",
    "questions[0].choices[0].value",
  ],
  [
    "a string and a boolean with the same text",
    ask({ type: "choice", instructions: "?", choices: [{ value: false }, { value: "false" }] }),
    "invalid_request",
    "questions[0].choices[1].value",
  ],
  [
    "the same choice twice",
    ask({ type: "choice", instructions: "?", choices: [{ value: "a" }, { value: "a" }] }),
    "invalid_request",
    "questions[0].choices[1].value",
  ],
  ["a score with 1 level", ask({ type: "score", instructions: "?", levels: levels(1) }), "invalid_request", "questions[0].levels"],
  ["a score with 11 levels", ask({ type: "score", instructions: "?", levels: levels(11) }), "invalid_request", "questions[0].levels"],
  [
    "a level without a label",
    ask({ type: "score", instructions: "?", levels: [{ description: "low" }, { label: "high" }] }),
    "invalid_request",
    "questions[0].levels[0].label",
  ],
  [
    "an image in the input",
    ask(predicate, { input: [{ role: "user", content: [{ type: "input_text", text: "Is this a cat?" }, image] }] }),
    "invalid_request",
    "input[0].content[1]",
  ],
  ["an image in the instructions", ask({ type: "predicate", instructions: [image] }), "invalid_request", "questions[0].instructions[0]"],
  [
    "a system message",
    ask(predicate, {
      input: [
        { role: "system", content: "Be strict." },
        { role: "user", content: "x" },
      ],
    }),
    "invalid_request",
    "input[0].role",
  ],
  [
    "an assistant message",
    ask(predicate, {
      input: [
        { role: "user", content: "x" },
        { role: "assistant", content: "y" },
      ],
    }),
    "invalid_request",
    "input[1].role",
  ],
  ["a function call output", ask(predicate, { input: [{ type: "function_call_output", call_id: "c1", output: "42" }] }), "invalid_request", "input[0].type"],
  ["an unknown x_debias", ask(predicate, { x_debias: "sorted" }), "invalid_request", "x_debias"],
];

describe("400 for a bad request, in OpenAI's error shape, naming the field as param", () => {
  for (const [name, body, code, param] of BAD_REQUESTS) {
    it(name, async () => {
      expectDecisionsError(await postDecisions(server, body), 400, code, param);
    });
  }

  it("what is not supported is said plainly", async () => {
    const response = await postDecisions(server, ask(predicate, { input: [{ role: "user", content: [image] }] }));
    expect(response.json.error.message, show(response)).toMatch(/images \(input_image\) are not supported/);
    const tool = await postDecisions(server, ask(predicate, { input: [{ type: "function_call", call_id: "c", name: "f", arguments: "{}" }] }));
    expect(tool.json.error.message, show(tool)).toMatch(/function_call items are not supported/);
  });

  it("more questions than the server's maximum", async () => {
    expectDecisionsError(await postDecisions(small, decisionsBody(4)), 400, "too_many_questions", "questions");
    const three = await postDecisions(small, decisionsBody(3));
    expect(three.status, show(three)).toBe(200);
  });

  it("an input over the model's context budget", async () => {
    const words = Array.from({ length: 12_000 }, (_, i) => `w${(i * 7919) % 10007}`).join(" ");
    const response = await postDecisions(server, decisionsBody(1, words));
    expectDecisionsError(response, 400, "over_budget");
    expect(response.json.error.message, show(response)).toMatch(/token/);
  });

  it("a Content-Encoding the server does not read: 415", async () => {
    const response = await postDecisions(server, decisionsBody(1), { headers: { "content-encoding": "gzip" } });
    expectDecisionsError(response, 415, "unsupported_content_encoding");
  });

  it("a body over 256 KB: 413, with the rate-limit headers", async () => {
    const response = await postDecisions(server, { ...decisionsBody(1), padding: "x".repeat(256 * 1024) });
    expectDecisionsError(response, 413, "body_too_large");
    expect(response.headers.get("x-ratelimit-limit"), show(response)).not.toBeNull();
  });

  it("the same server still answers after all of them", async () => {
    const response = await postDecisions(server, decisionsBody(1));
    expect(response.status, show(response)).toBe(200);
  });
});

describe("401 without a valid key", () => {
  it("no Authorization header, before the body is looked at", async () => {
    expectDecisionsError(await postDecisions(server, "{not json", { key: null }), 401, "missing_api_key");
  });

  it("a malformed header, and an unknown key", async () => {
    expectDecisionsError(await postDecisions(server, decisionsBody(1), { authorization: "Basic dXNlcjpwYXNz" }), 401, "invalid_api_key");
    expectDecisionsError(await postDecisions(server, decisionsBody(1), { key: "sk-proj-" + "x".repeat(40) }), 401, "invalid_api_key");
  });

  it("a revoked key: the very next request is refused", async () => {
    const { key, record } = await server.store.keys.create({ accountId: server.accountId, name: "revoked for decisions" });
    expect((await postDecisions(server, decisionsBody(1), { key })).status).toBe(200);
    await server.store.keys.revoke(record.id);
    expectDecisionsError(await postDecisions(server, decisionsBody(1), { key }), 401, "invalid_api_key");
  });
});

describe("money: 402, 429 and 502 charge nothing", () => {
  const billing = useBillingServers({ stalling: true });

  it("402 when neither the plan nor the balance can pay, with the standing headers; the model is not asked", async () => {
    const s = await billing.server({ plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000, requestsPerMinute: 100 }, balanceMicro: 5 });
    const before = await moneyTables(s.database);
    const evaluations = billing.engine.evaluations;
    const refused = await postDecisions(s, decisionsBody(2));
    expectDecisionsError(refused, 402, "insufficient_funds", null);
    expect(billingHeadersOf(refused), show(refused)).toMatchObject({
      "x-billed-to": null,
      "x-plan-usage": "100%",
      "x-balance-remaining": "0.000005",
      "x-ratelimit-remaining": "99",
    });
    expect(await moneyTables(s.database), show(refused)).toEqual(before);
    expect(billing.engine.evaluations, "a 402 never reaches the model").toBe(evaluations);
  });

  it("429 past the plan's requests per minute, with Retry-After; every authenticated attempt counts", async () => {
    const s = await billing.server({ plan: { requestsPerMinute: 2 } });
    const bad = await postDecisions(s, ask(predicate, { model: "gpt-4o" }));
    const good = await postDecisions(s, decisionsBody(1));
    expect([bad.status, good.status], `${show(bad)}\n${show(good)}`).toEqual([400, 200]);
    const before = await moneyTables(s.database);
    const limited = await postDecisions(s, decisionsBody(1));
    expectDecisionsError(limited, 429, "rate_limited", null);
    expect(billingHeadersOf(limited), show(limited)).toMatchObject({
      "retry-after": "60",
      "x-ratelimit-reset": "60",
      "x-ratelimit-remaining": "0",
      "x-billed-to": null,
    });
    expect(await moneyTables(s.database), show(limited)).toEqual(before);
  });

  it("409 while a request with the same Idempotency-Key runs", async () => {
    const s = await billing.server();
    const stall = billing.engine.stall();
    const headers = { "idempotency-key": "busy-1" };
    const first = postDecisions(s, decisionsBody(1), { headers });
    try {
      await stall.entered;
      expectDecisionsError(await postDecisions(s, decisionsBody(1), { headers }), 409, "idempotency_key_in_use");
    } finally {
      stall.release();
    }
    expect((await first).status, show(await first)).toBe(200);
  });

  const FAILING: [name: string, engine: () => Parameters<typeof billing.server>[0], code: string][] = [
    ["the engine fails while evaluating", () => ({ engine: evaluateFailsEngine() }), "model_failed"],
    ["the engine is unavailable", () => ({ engine: unavailableEngine() }), "model_unavailable"],
    ["the engine never answers", () => ({ engine: hangingEngine({ inputTokens: 50 }), requestTimeoutMs: 200 }), "model_timeout"],
  ];
  for (const [name, options, code] of FAILING) {
    it(`502 ${code} when ${name}, never charged, and a bad request to it is still a 400`, async () => {
      const s = await billing.server({ ...options(), plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 10_000 });
      const before = await moneyTables(s.database);
      const failed = await postDecisions(s, decisionsBody(2));
      expectDecisionsError(failed, 502, code, null);
      expect(billingHeadersOf(failed), show(failed)).toMatchObject({ "x-billed-to": null, "x-ratelimit-remaining": expect.any(String) });
      expect(await moneyTables(s.database), show(failed)).toEqual(before);
      expectDecisionsError(await postDecisions(s, ask(predicate, { questions: [] })), 400, "invalid_request");
    });
  }
});

describe("other routes keep their own shape", () => {
  it("/v1/systemone's errors are unchanged beside this route", async () => {
    const response = await postDecisions({ url: server.url, key: server.key }, "{", { key: null });
    expectDecisionsError(response, 401);
    const theirs = await fetch(`${server.url}/v1/systemone`, { method: "POST", body: "{" });
    const body = await theirs.json();
    expect(Object.keys(body), JSON.stringify(body)).toEqual(["error", "code", "detail"]);
  });
});
