import OpenAI, { AuthenticationError, BadRequestError, InternalServerError, RateLimitError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { moneyTables } from "../../testing/billing-http.js";
import { evaluateFailsEngine } from "../../testing/fault-engines.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/**
 * The drop-in test: the official `openai` npm package, unchanged, pointed at a running server.
 * Requests are counted server-side (the access log), so a retried request cannot hide.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const show = (value: unknown) => JSON.stringify(value, null, 1);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

const client = (s: TestServer, options: { apiKey?: string; maxRetries?: number } = {}) =>
  new OpenAI({ baseURL: `${s.url}/v1`, apiKey: options.apiKey ?? s.key, maxRetries: options.maxRetries ?? 2 });

/** Statuses of the POST /v1/decisions requests that reached `s`, in order, from its access log. */
const decisionsStatuses = (s: TestServer): number[] =>
  s.logLines
    .map((line) => JSON.parse(line))
    .filter((l) => l.message === "request" && l.path === "/v1/decisions")
    .map((l) => l.status);

/** The error a call rejects with (the test fails if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("the call succeeded");
}

describe("client.decisions.create against this server", () => {
  it("parses predicate, choice (string and boolean values, 255 options) and score answers", async () => {
    const values: (string | boolean)[] = Array.from({ length: 255 }, (_, i) => (i === 0 ? true : i === 1 ? false : `option ${i}`));
    const {
      data: decision,
      response,
      request_id,
    } = await client(server)
      .decisions.create({
        model: "gpt-6-luna",
        input: [{ role: "user", content: [{ type: "input_text", text: "I was charged twice and want my money back." }] }],
        questions: [
          { type: "predicate", name: "angry", instructions: "The customer is angry." },
          {
            type: "choice",
            name: "refund",
            instructions: "Should we refund?",
            choices: [{ value: true, description: "yes" }, { value: false }, { value: "later" }],
          },
          { type: "choice", name: "many", instructions: "Which option?", choices: values.map((value) => ({ value })) },
          {
            type: "score",
            name: "urgency",
            instructions: "How urgent?",
            levels: [{ label: "low" }, { label: "medium" }, { label: "high", description: "today" }],
          },
        ],
      })
      .withResponse();
    const message = show(decision);
    expect(decision.model, message).toBe(server.engine.modelId);
    expect(request_id, "the SDK reads x-request-id").toBe(response.headers.get("x-request-id"));
    expect(response.headers.get("x-billed-to"), message).toBe("plan");

    const [angry, refund, many, urgency] = decision.answers;
    if (angry.type !== "predicate" || refund.type !== "choice" || many.type !== "choice" || urgency.type !== "score") throw new Error(`types: ${message}`);
    expect([angry.name, refund.name, many.name, urgency.name]).toEqual(["angry", "refund", "many", "urgency"]);
    expect(angry.probability > 0 && angry.probability < 1, message).toBe(true);

    expect(
      refund.probabilities.map((p) => p.value),
      message,
    ).toEqual([true, false, "later"]);
    expect(
      refund.probabilities.map((p) => typeof p.value),
      message,
    ).toEqual(["boolean", "boolean", "string"]);
    expect(
      many.probabilities.map((p) => p.value),
      message,
    ).toEqual(values);
    for (const answer of [refund, many]) {
      expect(sum(answer.probabilities.map((p) => p.probability)), message).toBeCloseTo(1, 9);
      const top = answer.probabilities.reduce((a, b) => (b.probability > a.probability ? b : a));
      expect(answer.choice, message).toBe(top.value);
    }

    expect(
      urgency.probabilities.map((p) => [p.value, p.label]),
      message,
    ).toEqual([
      [0, "low"],
      [1, "medium"],
      [2, "high"],
    ]);
    expect(urgency.score, message).toBeCloseTo(sum(urgency.probabilities.map((p) => p.value * p.probability)), 12);
    expect(decision.usage.input_tokens, message).toBeGreaterThan(0);
    expect(decision.usage.total_tokens, message).toBe(decision.usage.input_tokens);
  });

  it("an image input is a 400 BadRequestError saying so, and is not retried", async () => {
    const before = decisionsStatuses(server).length;
    const error = await rejection(
      client(server).decisions.create({
        model: "gpt-6-luna",
        input: [{ role: "user", content: [{ type: "input_image", image_url: "https://example.com/receipt.png" }] }],
        questions: [{ type: "predicate", instructions: "The receipt shows a double charge." }],
      }),
    );
    expect(error, String(error)).toBeInstanceOf(BadRequestError);
    const bad = error as BadRequestError;
    expect([bad.status, bad.code, bad.type, bad.param], String(bad)).toEqual([400, "invalid_request", "invalid_request_error", "input[0].content[0]"]);
    expect(bad.message, String(bad)).toMatch(/images \(input_image\) are not supported/);
    expect(decisionsStatuses(server).slice(before), "exactly one attempt reached the server").toEqual([400]);
  });

  it("a wrong key is an AuthenticationError, not retried", async () => {
    const before = decisionsStatuses(server).length;
    const error = await rejection(
      client(server, { apiKey: "sk-not-ours" }).decisions.create({ model: "gpt-6-luna", input: "x", questions: [{ type: "predicate", instructions: "x" }] }),
    );
    expect(error, String(error)).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).code).toBe("invalid_api_key");
    expect(decisionsStatuses(server).slice(before)).toEqual([401]);
  });
});

describe("429: the SDK reads Retry-After", () => {
  const ask = { model: "gpt-6-luna", input: "x", questions: [{ type: "predicate" as const, instructions: "It holds." }] };

  it("a RateLimitError carries the Retry-After header and the catalogue's code", async () => {
    const s = await startTestServer({ plan: { requestsPerMinute: 1 } });
    try {
      await client(s).decisions.create(ask);
      const error = await rejection(client(s, { maxRetries: 0 }).decisions.create(ask));
      expect(error, String(error)).toBeInstanceOf(RateLimitError);
      const limited = error as RateLimitError;
      expect([limited.code, limited.type]).toEqual(["rate_limited", "rate_limit_error"]);
      const retryAfter = Number(limited.headers?.get("retry-after"));
      expect(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`).toBe(true);
      expect(limited.headers?.get("x-ratelimit-reset")).toBe(String(retryAfter));
      expect(decisionsStatuses(s)).toEqual([200, 429]);
    } finally {
      await s.close();
    }
  });

  it("with retries on, the SDK waits as long as Retry-After says and then gets its answer", async () => {
    // The services' clock runs in real time from a point set just before the window ends.
    let shift = 0;
    const s = await startTestServer({ plan: { requestsPerMinute: 1 }, now: () => Date.now() + shift });
    try {
      const { createdAt } = (await s.store.accounts.get(s.accountId))!;
      const intoWindow = (Date.now() + shift - createdAt) % 60_000;
      shift += (58_000 - intoWindow + 60_000) % 60_000;
      // Every authenticated attempt counts: this 400 uses the minute's only request.
      await rejection(client(s).decisions.create({ ...ask, model: "unknown" }));
      const started = performance.now();
      const decision = await client(s, { maxRetries: 2 }).decisions.create(ask);
      const waited = performance.now() - started;
      expect(decision.answers[0].type, show(decision)).toBe("predicate");
      const statuses = decisionsStatuses(s);
      expect(statuses, "400, then the SDK's 429, then its retry").toEqual([400, 429, 200]);
      // Retry-After was 2 (s to the window's end, rounded up); the SDK's own backoff would have been ≤ 1 s.
      expect(waited, `waited ${waited} ms`).toBeGreaterThanOrEqual(1_900);
    } finally {
      await s.close();
    }
  });
});

describe("502: the SDK retries a failed model, and nothing is charged", () => {
  it("an InternalServerError after every attempt", async () => {
    const s = await startTestServer({ engine: evaluateFailsEngine() });
    try {
      const before = await moneyTables(s.database);
      const error = await rejection(
        client(s, { maxRetries: 1 }).decisions.create({ model: "fault-model", input: "x", questions: [{ type: "predicate", instructions: "x" }] }),
      );
      expect(error, String(error)).toBeInstanceOf(InternalServerError);
      expect([(error as InternalServerError).status, (error as InternalServerError).code, (error as InternalServerError).type]).toEqual([
        502,
        "model_failed",
        "server_error",
      ]);
      expect(decisionsStatuses(s)).toEqual([502, 502]);
      expect(await moneyTables(s.database)).toEqual(before);
    } finally {
      await s.close();
    }
  });
});
