import { afterEach, describe, expect, it } from "vitest";
import { parseRetryAfter } from "../clients/judgment-endpoint.js";
import { createJudgmentClient, JudgmentRequestError, type RetryEvent } from "./client.js";
import { replyTo, startFakeJudgeServer, type FakeJudgeServer, type ScriptedResponse } from "../testing/fake-judge-server.js";

const show = (value: unknown) => JSON.stringify(value, null, 1);
const request = { state: "s", questions: { q: { type: "noul", instructions: "x" } } };

let server: FakeJudgeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A client on a scripted server that records its sleeps instead of waiting. */
async function scripted(script: (body: any, index: number) => ScriptedResponse, options: { retries?: number; timeoutMs?: number } = {}) {
  server = await startFakeJudgeServer(script);
  const sleeps: number[] = [];
  const retries: RetryEvent[] = [];
  const client = createJudgmentClient({
    url: `${server.url}/`,
    key: "tjs_secret",
    random: () => 0.5,
    sleep: async (ms) => void sleeps.push(ms),
    onRetry: (event) => retries.push(event),
    ...options,
  });
  return { client, sleeps, retries, server };
}

describe("judgment client", () => {
  it("posts the body as JSON with the bearer key to /v1/systemone and returns model, answers and usage", async () => {
    const { client, server } = await scripted((body) => replyTo(body, "m-1"));
    const reply = await client.judge(request);
    expect(reply, show(reply)).toEqual({ model: "m-1", answers: { q: { type: "noul", noul: 0.6 } }, usage: { input_tokens: 10 } });
    expect(server.received[0].url).toBe("/v1/systemone");
    expect(server.received[0].headers.authorization).toBe("Bearer tjs_secret");
    expect(server.received[0].body).toEqual(request);
  });

  it("waits as long as a 429's Retry-After says, then retries", async () => {
    const { client, sleeps, retries } = await scripted((body, i) =>
      i === 0 ? { status: 429, headers: { "retry-after": "3" }, body: { error: "slow down" } } : replyTo(body),
    );
    await client.judge(request);
    expect(sleeps, show(retries)).toEqual([3000]);
    expect(retries[0], show(retries)).toMatchObject({ attempt: 1, delayMs: 3000, reason: expect.stringMatching(/429.*slow down/) });
  });

  it("retries 5xx with growing backoff and gives up after the allowed retries, saying how often it tried", async () => {
    const { client, sleeps, server } = await scripted(() => ({ status: 503, body: { error: "busy", code: "model_unavailable" } }), { retries: 3 });
    const error = await client.judge(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JudgmentRequestError);
    expect((error as Error).message).toMatch(/answered 503 model_unavailable: busy \(gave up after 4 attempts\)/);
    expect(server.received).toHaveLength(4);
    // random() = 0.5: 3/4 of 500·2ⁿ.
    expect(sleeps).toEqual([375, 750, 1500]);
  });

  it("with --retries 0, says it gave up after one attempt, in the singular", async () => {
    const { client, sleeps } = await scripted(() => ({ status: 503, body: { error: "busy", code: "model_unavailable" } }), { retries: 0 });
    const error = await client.judge(request).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/busy \(gave up after 1 attempt\)$/);
    expect(sleeps).toEqual([]);
  });

  it("fails at once on a 400, with the server's message and code", async () => {
    const { client, server } = await scripted(() => ({
      status: 400,
      body: { error: "questions.q.criteria: choice needs between 2 and 255 options", code: "invalid_request" },
    }));
    const error = (await client.judge(request).catch((e: unknown) => e)) as JudgmentRequestError;
    expect(error.message).toMatch(/answered 400 invalid_request: questions\.q\.criteria: choice needs/);
    expect(error.status).toBe(400);
    expect(server.received).toHaveLength(1);
  });

  it("reads the message from detail or message, as other servers put it", async () => {
    const { client } = await scripted(() => ({ status: 401, body: { detail: "bad key" } }));
    await expect(client.judge(request)).rejects.toThrow(/401: bad key/);
  });

  it("retries an attempt that times out", async () => {
    const { client, server } = await scripted((body, i) => ({ ...replyTo(body), delayMs: i === 0 ? 2000 : 0 }), { timeoutMs: 200 });
    const reply = await client.judge(request);
    expect(reply.model).toBe("fake-model");
    expect(server.received).toHaveLength(2);
  });

  it("refuses a 200 that is not a judgment", async () => {
    const { client } = await scripted(() => ({ status: 200, body: { hello: 1 } }));
    await expect(client.judge(request)).rejects.toThrow(/without model and answers/);
  });
});

describe("parseRetryAfter", () => {
  it("reads seconds and HTTP dates, and ignores anything else", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("7", now)).toBe(7000);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:05 GMT", now)).toBe(5000);
    expect(parseRetryAfter("Wed, 31 Dec 2025 00:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});
