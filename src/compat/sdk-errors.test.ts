import { APIError, AuthenticationError, BadRequestError, choice, noul, RateLimitError, TypeSafeClient } from "@typesafe-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addTestAccount, startTestServer, type TestServer } from "../testing/server.js";

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

/** Access-log lines of POST /v1/systemone: one per request that reached the server. */
const systemOneRequests = () => server.logLines.map((line) => JSON.parse(line)).filter((l) => l.message === "request" && l.path === "/v1/systemone").length;

/**
 * Errors as clients written for the hosted service read them. The SDK takes its message from
 * `error` first and from `detail.message` otherwise, and keeps the body: so both kinds of client
 * read the same sentence, and `detail.error_type` is there for those that branch on it.
 */
describe("the official SDK reads the hosted service's error shape", () => {
  /** The SDK error a call raised, checked: our body, the hosted detail beside it, the same message either way. */
  function expectHostedError(error: unknown, status: number, errorType: string, code: string): APIError {
    expect(error, show(error)).toBeInstanceOf(APIError);
    const e = error as APIError;
    const body = e.body as { error: string; code: string; detail: { error_type: string; message: string } };
    const context = show({ status: e.status, message: e.message, body });
    expect(e.status, context).toBe(status);
    expect(body.code, context).toBe(code);
    expect(body.detail, context).toEqual({ error_type: errorType, message: body.error });
    expect(e.message, context).toBe(`${status} ${body.error}`);
    // A body with nothing but the hosted service's shape gives the SDK the very same message.
    expect(APIError.fromResponse(status, { detail: body.detail }, e.headers).message, context).toBe(e.message);
    return e;
  }

  it("401: AuthenticationError with detail.error_type authentication_error, sent once", async () => {
    const before = systemOneRequests();
    const error = await sdkClient("tjs_not_a_real_key")
      .systemOne({ state: "s", questions: { q: noul("x") } })
      .catch((e: unknown) => e);
    expect(error, show(error)).toBeInstanceOf(AuthenticationError);
    expectHostedError(error, 401, "authentication_error", "invalid_api_key");
    expect(systemOneRequests() - before, show(server.logLines.slice(-5))).toBe(1);
  });

  it("402: an APIError with detail.error_type billing_error, saying what was needed, sent once (never retried)", async () => {
    const broke = await addTestAccount(server.services, { plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 } });
    const before = systemOneRequests();
    const error = await sdkClient(broke.key)
      .systemOne({ state: "s", questions: { q: noul("x") } })
      .catch((e: unknown) => e);
    const e = expectHostedError(error, 402, "billing_error", "insufficient_funds");
    expect(e.message, show(e.body)).toMatch(/nothing was charged/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(systemOneRequests() - before, show(server.logLines.slice(-5))).toBe(1);
  });

  it("429: RateLimitError with detail.error_type rate_limit_error and the Retry-After the SDK waits by", async () => {
    const limited = await addTestAccount(server.services, { plan: { requestsPerMinute: 1 } });
    const once = sdkClient(limited.key);
    await once.systemOne({ state: "s", questions: { q: noul("x") } });
    const error = await once.systemOne({ state: "s", questions: { q: noul("x") } }, { retry: { maxRetries: 0 } }).catch((e: unknown) => e);
    expect(error, show(error)).toBeInstanceOf(RateLimitError);
    const e = expectHostedError(error, 429, "rate_limit_error", "rate_limited");
    const retryAfterMs = (e as RateLimitError).retryAfterMs;
    expect(retryAfterMs !== undefined && retryAfterMs > 0 && retryAfterMs <= 60_000, show({ retryAfterMs, headers: [...e.headers] })).toBe(true);
  });

  it("400 over the context budget: BadRequestError with detail.error_type max_tokens_exceeded", async () => {
    const state = Array.from({ length: 12_000 }, (_, i) => `w${(i * 7919) % 10007}`).join(" ");
    const error = await client.systemOne({ state, questions: { q: noul("x") } }).catch((e: unknown) => e);
    expect(error, show(error)).toBeInstanceOf(BadRequestError);
    expectHostedError(error, 400, "max_tokens_exceeded", "over_budget");
  });

  it("400 for a bad request and an unknown model: detail.error_type api_usage_error", async () => {
    const shape = await client.systemOne({ state: "s", questions: { q: choice("Only one?", { only: null }) } }).catch((e: unknown) => e);
    expectHostedError(shape, 400, "api_usage_error", "invalid_request");
    const model = await client.systemOne({ state: "s", questions: { q: noul("x") }, model: "jev-9" }).catch((e: unknown) => e);
    expectHostedError(model, 400, "api_usage_error", "unknown_model");
  });
});
