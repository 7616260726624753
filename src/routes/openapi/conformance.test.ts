import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_TYPE, type ErrorCode } from "../../errors.js";
import { evaluateFailsEngine, loadingEngine, failedEngine, unavailableEngine } from "../../testing/fault-engines.js";
import { call, postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { openApiConformance, type OpenApiConformance } from "../../testing/openapi-conformance.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/** Real responses, from the real app, match what GET /openapi.json says about them. */

let server: TestServer;
let failing: TestServer;
let unavailable: TestServer;
let loading: TestServer;
let failed: TestServer;
let conformance: OpenApiConformance;

beforeAll(async () => {
  server = await startTestServer();
  [failing, unavailable, loading, failed] = await Promise.all([
    startTestServer({ engine: evaluateFailsEngine() }),
    startTestServer({ engine: unavailableEngine() }),
    startTestServer({ engine: loadingEngine("resolving the model file") }),
    startTestServer({ engine: failedEngine("model failed to load: bad magic") }),
  ]);
  const document = await call(server.url, "/openapi.json");
  expect(document.status, show(document)).toBe(200);
  conformance = openApiConformance(document.json);
});
afterAll(async () => {
  await Promise.all([server, failing, unavailable, loading, failed].map((s) => s?.close()));
});

const choice = { type: "choice", instructions: "Which team?", criteria: { billing: "money", "tech 🛠": null, 계정: "account" } };
const noul = { type: "noul", instructions: "The customer is angry." };
const score = { type: "score", instructions: "How urgent?", criteria: ["not", "somewhat", "very"] };
const valid = { model: "jev-latest", state: "I was charged twice!", questions: { c: choice, n: noul, s: score } };

/** name → how to get the real response and the status it must have. */
const CASES: [name: string, request: () => Promise<CapturedResponse>, status: number][] = [
  ["POST /v1/systemone 200 (choice, noul, score)", () => postJudgment(server, valid), 200],
  [
    "POST /v1/systemone 200 (10 levels, 255 options)",
    () =>
      postJudgment(server, {
        questions: {
          s: { ...score, criteria: Array.from({ length: 10 }, (_, i) => `level ${i}`) },
          c: { ...choice, criteria: Object.fromEntries(Array.from({ length: 255 }, (_, i) => [`o${i}`, `option ${i}`])) },
        },
      }),
    200,
  ],
  ["POST /v1/systemone 400 (not JSON)", () => postJudgment(server, "{oops"), 400],
  ["POST /v1/systemone 400 (empty questions)", () => postJudgment(server, { questions: {} }), 400],
  ["POST /v1/systemone 400 (unknown model)", () => postJudgment(server, { ...valid, model: "gpt-4o" }), 400],
  [
    "POST /v1/systemone 400 (too many questions)",
    () =>
      postJudgment(server, {
        questions: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`q${i}`, noul])),
      }),
    400,
  ],
  [
    "POST /v1/systemone 400 (over the context budget)",
    () =>
      postJudgment(server, {
        state: Array.from({ length: 12_000 }, (_, i) => `w${(i * 7919) % 10007}`).join(" "),
        questions: { n: noul },
      }),
    400,
  ],
  ["POST /v1/systemone 401 (no key)", () => postJudgment(server, valid, { key: null }), 401],
  ["POST /v1/systemone 401 (unknown key)", () => postJudgment(server, valid, { key: "tjs_" + "k".repeat(40) }), 401],
  ["POST /v1/systemone 413 (over 256 KB)", () => postJudgment(server, { ...valid, padding: "x".repeat(256 * 1024) }), 413],
  ["POST /v1/systemone 502 (engine fails while evaluating)", () => postJudgment(failing, valid), 502],
  ["POST /v1/systemone 502 (engine unavailable)", () => postJudgment(unavailable, valid), 502],
  ["GET /health 200", () => call(server.url, "/health"), 200],
  ["GET /health 503 (loading)", () => call(loading.url, "/health"), 503],
  ["GET /health 503 (failed)", () => call(failed.url, "/health"), 503],
  ["GET /v1/models 200", () => call(server.url, "/v1/models"), 200],
];

describe("real responses match the OpenAPI document", () => {
  for (const [name, request, status] of CASES) {
    it(name, async () => {
      const response = await request();
      expect(response.status, show(response, `${name}: unexpected status`)).toBe(status);
      conformance.check(response);
      if (status >= 400) {
        // The schema cannot tie error_type to code; the catalogue does.
        const { code, error, detail } = response.json;
        expect(detail, show(response)).toEqual({ error_type: ERROR_TYPE[code as ErrorCode], message: error });
      }
    });
  }
});

describe("the conformance check itself", () => {
  const fake = (path: string, method: string, status: number, body: unknown): CapturedResponse => ({
    method,
    path,
    status,
    headers: new Headers({ "content-type": "application/json", "x-request-id": "req_test", "x-typesafe-request-id": "req_test" }),
    text: JSON.stringify(body),
    json: body,
  });

  it("fails a response whose status is not documented", () => {
    expect(() => conformance.check(fake("/v1/systemone", "POST", 418, { error: "teapot", code: "invalid_request" }))).toThrow(/not documented/);
    expect(() => conformance.check(fake("/health", "GET", 500, { error: "boom", code: "internal_error" }))).toThrow(/not documented/);
  });

  it("fails a body that does not match the schema, and a missing documented header", () => {
    expect(() => conformance.check(fake("/v1/systemone", "POST", 401, { message: "no error field" }))).toThrow(/schema/);
    expect(() => conformance.check(fake("/health", "GET", 200, { status: "ok" }))).toThrow(/schema/);
    const noHeader = { ...fake("/v1/models", "GET", 200, { models: [] }), headers: new Headers({ "content-type": "application/json" }) };
    expect(() => conformance.check(noHeader)).toThrow(/x-request-id/);
  });

  it("fails an error body without the hosted service's detail, or with an error type it does not have", () => {
    expect(() => conformance.check(fake("/v1/systemone", "POST", 401, { error: "no key", code: "missing_api_key" }))).toThrow(/detail/);
    const unknownType = { error: "no key", code: "missing_api_key", detail: { error_type: "auth_error", message: "no key" } };
    expect(() => conformance.check(fake("/v1/systemone", "POST", 401, unknownType))).toThrow(/error_type/);
    const healthWithout = {
      error: "loading",
      code: "service_unavailable",
      status: "loading",
      model: "m",
      parts: { model: { name: "m", ok: false }, database: { name: "d", ok: true } },
    };
    expect(() => conformance.check(fake("/health", "GET", 503, healthWithout))).toThrow(/detail/);
  });

  it("passes a body that matches", () => {
    const body = { error: "no key", code: "missing_api_key", detail: { error_type: "authentication_error", message: "no key" } };
    expect(() => conformance.check(fake("/v1/systemone", "POST", 401, body))).not.toThrow();
  });
});
