import {
  AuthenticationError,
  BadRequestError,
  choice,
  noul,
  score,
  TypeSafeClient,
  type ChoiceCriteria,
  type ChoiceResponse,
  type ScoreResponse,
} from "@typesafe-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../testing/server.js";

let server: TestServer;
let client: TypeSafeClient;

beforeAll(async () => {
  server = await startTestServer();
  client = sdkClient(server.key);
});
afterAll(async () => {
  await server?.close();
});

/** Retries kept fast, so a wrongly retried request would show up as extra requests, not as a slow test. */
function sdkClient(apiKey: string): TypeSafeClient {
  return new TypeSafeClient({ apiKey, baseURL: server.url, logLevel: "off", retry: { backoffInitialMs: 1, backoffMaxMs: 1, backoffJitter: 0 } });
}

const show = (value: unknown) => JSON.stringify(value, null, 1);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Access-log lines of POST /v1/systemone: one per request that reached the server. */
const systemOneRequests = () => server.logLines.map((line) => JSON.parse(line)).filter((l) => l.message === "request" && l.path === "/v1/systemone").length;

function expectChoiceShape(answer: ChoiceResponse, options: string[], context: unknown) {
  const message = show(context);
  expect(answer.type, message).toBe("choice");
  expect(Object.keys(answer.probabilities), message).toEqual(options);
  const ps = Object.values(answer.probabilities) as number[];
  for (const p of ps) expect(Number.isFinite(p) && p >= 0 && p <= 1, message).toBe(true);
  expect(Math.abs(sum(ps) - 1), message).toBeLessThan(1e-9);
  expect(answer.choice, message).toBe(options[ps.indexOf(Math.max(...ps))]);
  const m = Math.max(...ps);
  const n = ps.length;
  expect(answer.confidence, message).toBeCloseTo((m - 1 / n) / (1 - 1 / n), 12);
}

function expectScoreShape(answer: ScoreResponse, levels: number, context: unknown) {
  const message = show(context);
  const keys = Array.from({ length: levels }, (_, i) => String(i));
  expect(answer.type, message).toBe("score");
  expect(Object.keys(answer.probabilities), message).toEqual(keys);
  expect(Object.keys(answer.legend), message).toEqual(keys);
  const ps = Object.values(answer.probabilities) as number[];
  expect(Math.abs(sum(ps) - 1), message).toBeLessThan(1e-9);
  expect(answer.score, message).toBeCloseTo(sum(ps.map((p, i) => i * p)), 12);
  const k = ps.indexOf(Math.max(...ps));
  const d = sum(ps.map((_, i) => Math.abs(i - (levels - 1) / 2))) / levels;
  expect(answer.confidence, message).toBeCloseTo(Math.max(0, 1 - sum(ps.map((p, i) => p * Math.abs(i - k))) / d), 12);
}

describe("the official SDK against this server", () => {
  it("reads noul answers: no criteria, one-sided criteria, null instructions — with no confidence field", async () => {
    const result = await client.systemOne({
      state: "I was charged twice for one order.",
      questions: {
        plain: noul("The customer was charged twice."),
        oneSided: noul("A refund is owed.", { true: "the customer paid more than once" }),
        nullInstructions: noul(null, { true: "yes", false: "no" }),
        noArgs: noul(),
      },
    });
    for (const name of ["plain", "oneSided", "nullInstructions", "noArgs"] as const) {
      const answer = result.answers[name];
      expect(answer.type, show(result)).toBe("noul");
      expect(Number.isFinite(answer.noul) && answer.noul >= 0 && answer.noul <= 1, show(result)).toBe(true);
      expect("confidence" in answer, show(result)).toBe(false);
    }
    expect(Object.keys(result.answers), show(result)).toEqual(["plain", "oneSided", "nullInstructions", "noArgs"]);
  });

  it("reads the top level: model is the served model although the SDK sent jev-latest, integer input tokens, 0 output tokens", async () => {
    expect(client.defaultModel).toBe("jev-latest");
    const result = await client.systemOne({ state: "hello", questions: { q: noul("It is a greeting.") } });
    expect(result.model, show(result)).toBe(server.engine.modelId);
    expect(result.model, show(result)).not.toBe("jev-latest");
    expect(Number.isInteger(result.usage.input_tokens) && result.usage.input_tokens > 0, show(result)).toBe(true);
    expect(result.usage.output_tokens, show(result)).toBe(0);
  });

  it("reads a choice answer whose option descriptions are null, an object and an array", async () => {
    const criteria = { refund: null, replace: { action: "send a new one", cost: 12 }, escalate: ["to a human", "today"], ignore: "do nothing" };
    const result = await client.systemOne({
      state: { ticket: "My order arrived broken." },
      questions: { action: choice("What should we do?", criteria) },
    });
    expectChoiceShape(result.answers.action, Object.keys(criteria), result);
    const picked: "refund" | "replace" | "escalate" | "ignore" = result.answers.action.choice;
    expect(Object.keys(criteria), show(result)).toContain(picked);
  });

  it('reads a score answer made with the SDK\'s score() helper: legend echoes the descriptions under "0"…"n-1"', async () => {
    const levels: [string, { level: string; hint: string }, string[], string] = [
      "not urgent",
      { level: "somewhat", hint: "this week" },
      ["urgent", "today"],
      "critical",
    ];
    const result = await client.systemOne({ state: "The site is down.", questions: { urgency: score("How urgent is it?", levels) } });
    const answer = result.answers.urgency;
    expectScoreShape(answer, 4, result);
    expect(answer.legend, show(result)).toEqual({ "0": levels[0], "1": levels[1], "2": levels[2], "3": levels[3] });
  });

  it('reads a score whose levels are null, empty, an object and an array: the legend gives each back as sent, a null as ""', async () => {
    const levels: [null, string, { label: string; weight: number; tags: (string | null)[] }, string[], null] = [
      null,
      "",
      { label: "high", weight: 0.75, tags: ["x", null] },
      ["all", "of", "it"],
      null,
    ];
    const result = await client.systemOne({ state: "The site is down.", questions: { urgency: score("How urgent is it?", levels) } });
    const answer = result.answers.urgency;
    expectScoreShape(answer, 5, result);
    // The SDK types the legend as the levels sent; the wire never holds a null (jev-compat.md).
    expect(answer.legend[0] as unknown, show(result)).toBe("");
    expect(JSON.stringify(answer.legend), show(result)).toBe(JSON.stringify({ "0": "", "1": "", "2": levels[2], "3": levels[3], "4": "" }));
  });

  it("reads score answers for every scale length from 2 to 10", async () => {
    const questions = Object.fromEntries(
      Array.from({ length: 9 }, (_, i) => [
        `s${i + 2}`,
        score(`Rate it on ${i + 2} levels.`, Array.from({ length: i + 2 }, (_, j) => `level ${j}`) as [string, string]),
      ]),
    );
    const result = await client.systemOne({ state: "a review", questions });
    for (let n = 2; n <= 10; n++) expectScoreShape(result.answers[`s${n}`] as ScoreResponse, n, result);
  });

  it("reads a 255-option choice: all 255 keys come back and the probabilities sum to 1 within 1e-9", async () => {
    const criteria: ChoiceCriteria = Object.fromEntries(Array.from({ length: 255 }, (_, i) => [`option ${i}`, i % 2 ? null : `description ${i}`]));
    const result = await client.systemOne({ state: "pick a number", questions: { big: choice("Which option?", criteria) } });
    expectChoiceShape(result.answers.big, Object.keys(criteria), { usage: result.usage, answer: result.answers.big });
  });

  it("accepts an object state with nested objects and arrays, and a string state", async () => {
    const state = { customer: { name: "Ada", tags: ["vip", { since: 2019 }] }, orders: [{ id: 1, items: [[1, 2], { sku: "x" }] }], note: null };
    const questions = { vip: noul("The customer is a VIP."), mood: choice("Mood?", { calm: null, angry: null }) };
    const objectResult = await client.systemOne({ state, questions });
    const stringResult = await client.systemOne({ state: "Ada, a VIP since 2019, ordered twice.", questions });
    for (const result of [objectResult, stringResult]) {
      expect(result.answers.vip.type, show(result)).toBe("noul");
      expectChoiceShape(result.answers.mood, ["calm", "angry"], result);
    }
    expect(objectResult.usage.input_tokens, show({ objectResult, stringResult })).not.toBe(stringResult.usage.input_tokens);
  });

  it("returns question ids in Unicode (Hangul, emoji, spaces, dots, dashes) byte for byte", async () => {
    const ids = ["고객 감정", "🎉 party", "with  two  spaces", "dots.in.the.id", "dash-es--and_more", "mixed 한국어.🎉-x"];
    const questions = Object.fromEntries(
      ids.map((id, i) => [id, i % 2 ? noul(`Statement ${i}.`) : choice(`Question ${i}?`, { "옵션 🎉": null, "b.c-d e": "x" })]),
    );
    const result = await client.systemOne({ state: "state", questions });
    expect(Object.keys(result.answers), show(result)).toEqual(ids);
    for (const [i, id] of ids.entries()) {
      const answer = result.answers[id];
      if (i % 2 === 0) expectChoiceShape(answer as ChoiceResponse, ["옵션 🎉", "b.c-d e"], result);
      else expect(answer.type, show(result)).toBe("noul");
    }
  });

  describe("names that are also Object.prototype keys come back like any other name", () => {
    it("options and question ids named constructor, toString, hasOwnProperty", async () => {
      const criteria = { constructor: null, toString: "to string", hasOwnProperty: null };
      const result = await client.systemOne({ state: "s", questions: { constructor: choice("Which?", criteria), toString: noul("x") } });
      expect(Object.keys(result.answers), show(result)).toEqual(["constructor", "toString"]);
      expectChoiceShape(result.answers.constructor as ChoiceResponse, Object.keys(criteria), result);
    });

    it("an option named __proto__ is answered, not silently dropped", async () => {
      const questions = JSON.parse('{"q": {"type": "choice", "instructions": "Which?", "criteria": {"__proto__": "odd", "b": null, "c": null}}}');
      const result = await client.systemOne({ state: "s", questions }).catch((error: unknown) => ({ error: String(error) }));
      expect(result, show(result)).toHaveProperty("answers");
      expectChoiceShape((result as unknown as { answers: { q: ChoiceResponse } }).answers.q, ["__proto__", "b", "c"], result);
    });

    it("a question id __proto__ is answered, not silently dropped", async () => {
      const questions = JSON.parse('{"__proto__": {"type": "noul", "instructions": "x"}, "q": {"type": "noul", "instructions": "y"}}');
      const result = await client.systemOne({ state: "s", questions }).catch((error: unknown) => ({ error: String(error) }));
      expect(result, show(result)).toHaveProperty("answers");
      expect(Object.keys((result as { answers: object }).answers), show(result)).toEqual(["__proto__", "q"]);
    });

    it("a state key __proto__ reaches the model (it costs input tokens like any other key)", async () => {
      const questions = { q: noul("x") };
      const withKey = await client.systemOne({ state: JSON.parse('{"__proto__": "a long text the model must read", "x": 1}'), questions });
      const renamed = await client.systemOne({ state: { _proto_: "a long text the model must read", x: 1 }, questions });
      const without = await client.systemOne({ state: { x: 1 }, questions });
      const usage = { withKey: withKey.usage, renamed: renamed.usage, without: without.usage };
      expect(renamed.usage.input_tokens, show(usage)).toBeGreaterThan(without.usage.input_tokens);
      expect(withKey.usage.input_tokens, show(usage)).toBeGreaterThan(without.usage.input_tokens);
    });
  });

  it("lists models with models.list(): the served model and the SDK's default names", async () => {
    const models = await client.models.list();
    const names = models.map((m) => m.name);
    expect(names, show(models)).toContain(server.engine.modelId);
    expect(names, show(models)).toEqual(expect.arrayContaining(["jev-latest", "jev-preview"]));
    for (const m of models) {
      expect(typeof m.description, show(models)).toBe("string");
      expect(m.release_date, show(models)).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });

  it("exposes the request id through withResponse().requestId (x-typesafe-request-id)", async () => {
    const { data, requestId, response } = await client.systemOne({ state: "s", questions: { q: noul("x") } }).withResponse();
    expect(requestId, show({ data, headers: [...response.headers] })).toMatch(/^\S+$/);
    expect(response.headers.get("x-request-id"), show([...response.headers])).toBe(requestId);
    const models = await client.models.list().withResponse();
    expect(models.requestId, show([...models.response.headers])).toMatch(/^\S+$/);
    expect(models.requestId).not.toBe(requestId);
  });

  it("a bad request raises BadRequestError with our message, and is sent exactly once (never retried)", async () => {
    const before = systemOneRequests();
    // The SDK does not check a choice's option count, so this one-option choice reaches the server.
    const error = await client.systemOne({ state: "s", questions: { q: choice("Only one?", { only: "the one" }) } }).then(
      (result) => ({ unexpected: result }),
      (e: unknown) => e,
    );
    expect(error, show(error)).toBeInstanceOf(BadRequestError);
    const e = error as BadRequestError;
    expect(e.status, show(e)).toBe(400);
    const body = e.body as { error?: unknown };
    expect(typeof body.error, show(e.body)).toBe("string");
    expect(body.error, show(e.body)).toContain("choice needs between 2 and 255 options");
    expect(e.message, show({ message: e.message, body: e.body })).toBe(`400 ${body.error}`);
    expect(e.requestId, show([...e.headers])).toMatch(/^\S+$/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(systemOneRequests() - before, show(server.logLines.slice(-5))).toBe(1);
  });

  it("an unknown model raises BadRequestError naming the served model, sent once", async () => {
    const before = systemOneRequests();
    const error = await client.systemOne({ state: "s", questions: { q: noul("x") }, model: "gpt-nonexistent" }).catch((e: unknown) => e);
    expect(error, show(error)).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).message, show((error as BadRequestError).body)).toContain(server.engine.modelId);
    expect(systemOneRequests() - before, show(server.logLines.slice(-5))).toBe(1);
  });

  it("a wrong key raises AuthenticationError, sent once", async () => {
    const before = systemOneRequests();
    const error = await sdkClient("tjs_not_a_real_key")
      .systemOne({ state: "s", questions: { q: noul("x") } })
      .catch((e: unknown) => e);
    expect(error, show(error)).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).status).toBe(401);
    expect(systemOneRequests() - before, show(server.logLines.slice(-5))).toBe(1);
  });

  it("the SDK's model names jev-latest and jev-preview, and the served id, all answer the same", async () => {
    const ask = (model: string) => client.systemOne({ state: "same state", questions: { q: choice("Which?", { a: null, b: "bee" }) }, model });
    const [latest, preview, own] = await Promise.all([ask("jev-latest"), ask("jev-preview"), ask(server.engine.modelId)]);
    expect(preview.answers, show({ latest, preview })).toEqual(latest.answers);
    expect(own.answers, show({ latest, own })).toEqual(latest.answers);
    for (const r of [latest, preview, own]) expect(r.model).toBe(server.engine.modelId);
  });
});
