import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PUBLIC_CODES } from "../shared.schema.js";
import { DECISIONS_ERROR_TYPES } from "./errors.js";
import { call, show, type CapturedResponse } from "../../testing/http-client.js";
import { evaluateFailsEngine } from "../../testing/fault-engines.js";
import { openApiConformance, type OpenApiConformance } from "../../testing/openapi-conformance.js";
import { startTestServer, type TestServer } from "../../testing/server.js";
import { decisionsBody, postDecisions } from "./test-helpers.js";

/** POST /v1/decisions in GET /openapi.json, and real responses that match what it says. */

let server: TestServer;
let poor: TestServer;
let limited: TestServer;
let failing: TestServer;
let doc: any;
let conformance: OpenApiConformance;
beforeAll(async () => {
  server = await startTestServer();
  [poor, limited, failing] = await Promise.all([
    startTestServer({ engine: server.engine, plan: { allowanceQuestions: 0 } }),
    startTestServer({ engine: server.engine, plan: { requestsPerMinute: 1 } }),
    startTestServer({ engine: evaluateFailsEngine() }),
  ]);
  const document = await call(server.url, "/openapi.json");
  expect(document.status, show(document)).toBe(200);
  doc = document.json;
  conformance = openApiConformance(doc);
});
afterAll(async () => {
  await Promise.all([poor, limited, failing].map((s) => s?.close()));
  await server?.close();
});

const dump = (value: unknown) => JSON.stringify(value, null, 1);
const pretty = () => JSON.stringify(doc.paths?.["/v1/decisions"], null, 1);

describe("the document", () => {
  it("describes POST /v1/decisions behind the bearer key, with every status, x-request-id, billing headers and Retry-After", () => {
    const operation = doc.paths?.["/v1/decisions"]?.post;
    expect(operation, pretty()).toBeTruthy();
    expect(Object.keys(operation.responses).sort(), pretty()).toEqual(["200", "400", "401", "402", "404", "409", "413", "415", "429", "502"]);
    for (const [status, entry] of Object.entries<any>(operation.responses)) {
      expect(entry.headers?.["x-request-id"], `${status}: ${pretty()}`).toBeTruthy();
      expect(entry.content?.["application/json"]?.schema, `${status}: ${pretty()}`).toBeTruthy();
    }
    expect(Object.keys(operation.responses["200"].headers), pretty()).toEqual(
      expect.arrayContaining(["x-billed-to", "x-plan-usage", "x-balance-remaining", "x-ratelimit-limit", "x-ratelimit-remaining"]),
    );
    expect(Object.keys(operation.responses["429"].headers), pretty()).toContain("retry-after");
    expect(operation.security, pretty()).toEqual([{ bearerAuth: [] }]);
    expect(operation.parameters?.find((p: any) => p.name === "idempotency-key")?.in, pretty()).toBe("header");
  });

  it("documents the error shape: error {message, type, param, code}, the catalogue's public codes, the SDKs' types", () => {
    const error = doc.components.schemas.DecisionsError;
    expect(error.required, dump(error)).toEqual(["error"]);
    expect([...error.properties.error.required].sort(), dump(error)).toEqual(["code", "message", "param", "type"]);
    expect(error.properties.error.properties.type.enum, dump(error)).toEqual([...DECISIONS_ERROR_TYPES]);
    expect(error.properties.error.properties.code.enum, dump(error)).toEqual(PUBLIC_CODES);
    const validate = conformance.validatorFor("/v1/decisions", "post", 400);
    expect(validate({ error: "a string", code: "invalid_request" }), "our /v1/systemone shape is not this route's").toBe(false);
  });

  it("documents a request body that accepts real requests and refuses the wrong shapes", () => {
    const schema = doc.paths["/v1/decisions"].post.requestBody.content["application/json"].schema;
    const bodies = openApiConformance({
      ...doc,
      paths: { "/request": { post: { responses: { 200: { description: "", content: { "application/json": { schema } } } } } } },
    });
    const validate = bodies.validatorFor("/request", "post", 200);
    const good = {
      model: "gpt-6-luna",
      input: [
        {
          role: "user",
          type: "message",
          content: [
            { type: "input_text", text: "hi" },
            { type: "input_json", data: { a: 1 } },
          ],
        },
      ],
      questions: [
        { type: "predicate", instructions: "x", name: "p" },
        { type: "choice", instructions: [{ type: "input_text", text: "which?" }], choices: [{ value: true }, { value: "b", description: "bee" }] },
        { type: "score", instructions: "how?", levels: [{ label: "low" }, { label: "high", description: "very" }] },
      ],
    };
    expect(validate(good), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...good, input: "plain text" }), JSON.stringify(validate.errors)).toBe(true);
    for (const [why, bad] of [
      ["questions as an object", { ...good, questions: { q: good.questions[0] } }],
      ["one choice", { ...good, questions: [{ type: "choice", instructions: "x", choices: [{ value: "a" }] }] }],
      ["eleven levels", { ...good, questions: [{ type: "score", instructions: "x", levels: Array.from({ length: 11 }, () => ({ label: "l" })) }] }],
      ["an image part", { ...good, input: [{ role: "user", content: [{ type: "input_image", image_url: "x" }] }] }],
      ["no model", { input: "x", questions: good.questions }],
    ] as const) {
      expect(validate(bad), `${why} must not validate`).toBe(false);
    }
  });
});

describe("real responses match the document", () => {
  const CASES: [name: string, request: () => Promise<CapturedResponse>, status: number][] = [
    [
      "200 (predicate, choice, score)",
      () =>
        postDecisions(server, {
          model: "gpt-6-luna",
          input: "I was charged twice.",
          questions: [
            { type: "predicate", instructions: "Angry." },
            { type: "choice", name: "c", instructions: "Topic?", choices: [{ value: "billing" }, { value: false }] },
            { type: "score", instructions: "Urgency?", levels: [{ label: "low" }, { label: "high" }] },
          ],
        }),
      200,
    ],
    ["200 (debiased: x_debias in the body)", () => postDecisions(server, { ...decisionsBody(1), x_debias: "canonical" }), 200],
    ["400 (not JSON)", () => postDecisions(server, "{oops"), 400],
    [
      "400 (an image)",
      () => postDecisions(server, { ...decisionsBody(1), input: [{ role: "user", content: [{ type: "input_image", image_url: "x" }] }] }),
      400,
    ],
    ["400 (unknown model)", () => postDecisions(server, { ...decisionsBody(1), model: "gpt-4o" }), 400],
    ["401 (no key)", () => postDecisions(server, decisionsBody(1), { key: null }), 401],
    ["402 (no allowance, no balance)", () => postDecisions(poor, decisionsBody(1)), 402],
    ["413 (over 256 KB)", () => postDecisions(server, { ...decisionsBody(1), padding: "x".repeat(256 * 1024) }), 413],
    ["415 (gzip)", () => postDecisions(server, decisionsBody(1), { headers: { "content-encoding": "gzip" } }), 415],
    ["429 (the second request of the minute)", async () => (await postDecisions(limited, decisionsBody(1)), postDecisions(limited, decisionsBody(1))), 429],
    ["502 (the engine fails)", () => postDecisions(failing, { ...decisionsBody(1), model: "fault-model" }), 502],
  ];
  for (const [name, request, status] of CASES) {
    it(name, async () => {
      const response = await request();
      expect(response.status, show(response, name)).toBe(status);
      conformance.check(response);
    });
  }
});
