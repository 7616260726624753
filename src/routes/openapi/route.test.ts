import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_TYPE, type ErrorCode } from "../../errors.js";
import { call, show, type CapturedResponse } from "../../testing/http-client.js";
import { openApiConformance } from "../../testing/openapi-conformance.js";
import { expectRequestId } from "../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/** GET /openapi.json: a valid OpenAPI 3.1 document that describes the whole interface. */

let server: TestServer;
let response: CapturedResponse;
let doc: any;
beforeAll(async () => {
  server = await startTestServer();
  response = await call(server.url, "/openapi.json");
  doc = response.json;
});
afterAll(async () => {
  await server?.close();
});

const pretty = () => `GET /openapi.json -> ${response.status}\n${JSON.stringify(doc, null, 1)}`;

/** The operations the contract names, with the statuses each must document. */
const OPERATIONS: [path: string, method: string, statuses: string[]][] = [
  ["/v1/systemone", "post", ["200", "400", "401", "402", "404", "409", "413", "429", "502"]],
  ["/v1/decisions", "post", ["200", "400", "401", "402", "404", "409", "413", "429", "502"]],
  ["/health", "get", ["200", "503"]],
  ["/v1/models", "get", ["200"]],
  ["/openapi.json", "get", ["200"]],
];

describe("GET /openapi.json", () => {
  it("is served as JSON without a key", () => {
    expect(response.status, show(response)).toBe(200);
    expect(response.headers.get("content-type") ?? "", show(response)).toMatch(/^application\/json/);
    expectRequestId(response);
  });

  it("is OpenAPI 3.1 with info.version 1.0.0", () => {
    expect(doc.openapi, pretty()).toMatch(/^3\.1\.\d+$/);
    expect(doc.info?.version, pretty()).toBe("1.0.0");
    expect(typeof doc.info?.title, pretty()).toBe("string");
  });

  it("passes the OpenAPI schema validator", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.valid, `${JSON.stringify(result.errors, null, 1)}\n${pretty()}`).toBe(true);
    expect(validator.version, pretty()).toBe("3.1");
  });

  it("has no dangling $ref: every reference resolves inside the document", () => {
    const refs = [...new Set([...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]))];
    const resolves = (ref: string) =>
      ref.startsWith("#/") &&
      ref
        .slice(2)
        .split("/")
        .map((part) => decodeURIComponent(part).replaceAll("~1", "/").replaceAll("~0", "~"))
        .reduce<any>((node, part) => (node !== undefined && Object.hasOwn(node, part) ? node[part] : undefined), doc) !== undefined;
    const dangling = refs.filter((ref) => !resolves(ref));
    expect(dangling, `references to nothing: ${dangling.join(", ")}\ncomponents.schemas: ${Object.keys(doc.components?.schemas ?? {}).join(", ")}`).toEqual([]);
  });

  for (const [path, method, statuses] of OPERATIONS) {
    it(`describes ${method.toUpperCase()} ${path} with statuses ${statuses.join(", ")}, each JSON and with x-request-id`, () => {
      const operation = doc.paths?.[path]?.[method];
      expect(operation, `${method.toUpperCase()} ${path} missing\n${pretty()}`).toBeTruthy();
      expect(Object.keys(operation.responses ?? {}).sort(), pretty()).toEqual(expect.arrayContaining(statuses));
      for (const [status, entry] of Object.entries<any>(operation.responses)) {
        const where = `${method.toUpperCase()} ${path} ${status}\n${pretty()}`;
        expect(typeof entry.description, where).toBe("string");
        expect(entry.headers?.["x-request-id"]?.schema?.type, `x-request-id header not documented: ${where}`).toBe("string");
        expect(entry.content?.["application/json"]?.schema, `no application/json schema: ${where}`).toBeTruthy();
      }
    });
  }

  it("documents the spec's billing and rate-limit headers on POST /v1/systemone, and Retry-After on its 429", () => {
    const responses = doc.paths["/v1/systemone"].post.responses;
    const billing = ["x-billed-to", "x-plan-usage", "x-balance-remaining", "x-ratelimit-limit", "x-ratelimit-remaining"];
    expect(Object.keys(responses["200"].headers ?? {}), pretty()).toEqual(expect.arrayContaining(billing));
    expect(Object.keys(responses["429"].headers ?? {}), pretty()).toEqual(expect.arrayContaining(["retry-after"]));
    const idempotency = (doc.paths["/v1/systemone"].post.parameters ?? []).find((p: any) => p.name === "idempotency-key");
    expect(idempotency?.in, pretty()).toBe("header");
  });

  it("lists the public error codes and none that only the admin API returns", () => {
    const codes: string[] = doc.components?.schemas?.Error?.properties?.code?.enum ?? [];
    expect(codes, pretty()).toEqual(expect.arrayContaining(["invalid_request", "insufficient_funds", "rate_limited"]));
    expect(
      codes.filter((code) => ["account_not_found", "plan_not_found", "key_not_found", "plan_exists"].includes(code)),
      pretty(),
    ).toEqual([]);
  });

  it("describes the bearer security scheme, required by POST /v1/systemone only", () => {
    const schemes = doc.components?.securitySchemes ?? {};
    const bearer = Object.entries<any>(schemes).filter(([, scheme]) => scheme.type === "http" && scheme.scheme?.toLowerCase() === "bearer");
    expect(bearer.length, `no http bearer scheme\n${pretty()}`).toBe(1);
    const [name] = bearer[0];
    const required = (operation: any) => (operation.security ?? doc.security ?? []).some((entry: object) => name in entry);
    expect(required(doc.paths["/v1/systemone"].post), `POST /v1/systemone does not require ${name}\n${pretty()}`).toBe(true);
    expect(required(doc.paths["/health"].get), `GET /health must not require a key\n${pretty()}`).toBe(false);
    expect(required(doc.paths["/v1/models"].get), `GET /v1/models must not require a key\n${pretty()}`).toBe(false);
  });

  it("documents a required JSON request body for POST /v1/systemone that accepts real requests", () => {
    const body = doc.paths["/v1/systemone"].post.requestBody;
    expect(body?.required, pretty()).toBe(true);
    const schema = body?.content?.["application/json"]?.schema;
    expect(schema, pretty()).toBeTruthy();
    const conformance = openApiConformance({
      ...doc,
      paths: { "/request": { post: { responses: { 200: { description: "", content: { "application/json": { schema } } } } } } },
    });
    const validate = conformance.validatorFor("/request", "post", 200);
    const good = {
      model: "jev-latest",
      state: { ticket: "charged twice" },
      questions: {
        c: { type: "choice", instructions: "Which?", criteria: { a: "A", b: null } },
        n: { type: "noul", instructions: null, criteria: { true: "yes" } },
        s: { type: "score", instructions: ["How", "much"], criteria: ["low", "high"] },
      },
    };
    expect(validate(good), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ state: "no questions" }), "a body without questions must not validate").toBe(false);
    expect(validate({ questions: { s: { type: "score", instructions: "x", criteria: { 0: "low" } } } }), "score criteria as an object must not validate").toBe(
      false,
    );
  });

  it("documents error bodies with a string `error` for every error status", () => {
    const conformance = openApiConformance(doc);
    for (const [path, method, statuses] of OPERATIONS) {
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        const validate = conformance.validatorFor(path, method, Number(status));
        const where = `${method.toUpperCase()} ${path} ${status}\n${pretty()}`;
        expect(validate({}), `an empty object must not be a valid error body: ${where}`).toBe(false);
        expect(validate({ error: 42, code: "invalid_request" }), `error must be a string: ${where}`).toBe(false);
      }
    }
  });

  it("documents the hosted service's detail {error_type, message} as required in every error body, with every type of the catalogue", () => {
    const detail = doc.components?.schemas?.Error?.properties?.detail;
    expect(doc.components.schemas.Error.required, pretty()).toEqual(expect.arrayContaining(["error", "code", "detail"]));
    expect(detail?.required, pretty()).toEqual(["error_type", "message"]);
    const publicCodes = doc.components.schemas.Error.properties.code.enum as ErrorCode[];
    expect([...detail.properties.error_type.enum].sort(), pretty()).toEqual([...new Set(publicCodes.map((code) => ERROR_TYPE[code]))].sort());
    expect(detail.properties.error_type.enum, pretty()).toEqual(
      expect.arrayContaining(["authentication_error", "api_usage_error", "billing_error", "max_tokens_exceeded"]),
    );
    // The mapping is written out for people: every code appears after its own type.
    for (const code of publicCodes)
      expect(detail.properties.error_type.description, pretty()).toMatch(new RegExp(`${ERROR_TYPE[code]}: [a-z_, ]*\\b${code}\\b`));
    const unhealthy = doc.components.schemas.Unhealthy;
    expect(unhealthy.required, pretty()).toEqual(expect.arrayContaining(["error", "code", "detail"]));
    expect(unhealthy.properties.detail.properties.error_type.enum, pretty()).toEqual(["api_error"]);
  });

  it("documents legend values as the level descriptions as sent, never null", () => {
    const conformance = openApiConformance(doc);
    const validate = conformance.validatorFor("/v1/systemone", "post", 200);
    const body = (legend: unknown) => ({
      model: "m",
      answers: { s: { type: "score", score: 0.5, probabilities: { "0": 0.5, "1": 0.5 }, legend, confidence: 0 } },
      usage: { input_tokens: 3, output_tokens: 0 },
      timing_ms: 1,
    });
    expect(validate(body({ "0": "", "1": { level: "high" } })), JSON.stringify(validate.errors)).toBe(true);
    expect(validate(body({ "0": null, "1": "x" })), "a legend value is never null (jev-compat.md)").toBe(false);
    expect(validate(body({ "0": ["a", 1], "1": "" })), JSON.stringify(validate.errors)).toBe(true);
    expect(validate(body({ "0": 7, "1": "x" })), "a number is not a level description the request could have sent").toBe(false);
  });
});
