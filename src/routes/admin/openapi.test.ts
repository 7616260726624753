import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_TYPE } from "../../errors.js";
import { adminCall, TINY_JUDGMENT } from "../../testing/admin-client.js";
import { call, postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { openApiConformance } from "../../testing/openapi-conformance.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/** GET /admin/openapi.json describes the admin API; GET /openapi.json does not mention it. */

let server: TestServer;
let publicDoc: CapturedResponse;
let adminDoc: CapturedResponse;
beforeAll(async () => {
  server = await startTestServer();
  publicDoc = await call(server.url, "/openapi.json");
  adminDoc = await adminCall(server, "GET", "/admin/openapi.json");
});
afterAll(async () => {
  await server?.close();
});

const pretty = (response: CapturedResponse) => `GET ${response.path} -> ${response.status}\n${JSON.stringify(response.json, null, 1)}`;

const ADMIN_OPERATIONS = [
  "get /admin/v1/plans",
  "post /admin/v1/plans",
  "patch /admin/v1/plans/{plan}",
  "get /admin/v1/accounts",
  "post /admin/v1/accounts",
  "get /admin/v1/accounts/{id}",
  "get /admin/v1/accounts/{id}/usage",
  "get /admin/v1/overview",
  "put /admin/v1/accounts/{id}/plan",
  "post /admin/v1/accounts/{id}/top-ups",
  "post /admin/v1/accounts/{id}/adjustments",
  "get /admin/v1/accounts/{id}/ledger",
  "get /admin/v1/accounts/{id}/ledger.csv",
  "get /admin/v1/usage.csv",
  "post /admin/v1/accounts/{id}/keys",
  "post /admin/v1/keys/{id}/revoke",
  "patch /admin/v1/keys/{id}",
  "get /admin/v1/ledger/check",
  "patch /admin/v1/accounts/{id}",
  "post /admin/v1/accounts/{id}/disable",
  "post /admin/v1/accounts/{id}/enable",
  "get /admin/v1/audit",
  "get /admin/v1/admin-tokens",
  "post /admin/v1/admin-tokens",
  "post /admin/v1/admin-tokens/{id}/revoke",
  "get /admin/v1/accounts/{id}/tasks",
  "get /admin/v1/accounts/{id}/tasks/{task}",
  "get /admin/openapi.json",
];

describe("GET /openapi.json (public)", () => {
  it("lists no admin path, no admin schema and no admin security scheme", () => {
    expect(publicDoc.status, show(publicDoc)).toBe(200);
    expect(
      Object.keys(publicDoc.json.paths).filter((path) => path.startsWith("/admin")),
      pretty(publicDoc),
    ).toEqual([]);
    expect(publicDoc.text, pretty(publicDoc)).not.toMatch(/\/admin|adminToken|AdminAccount/);
  });
});

describe("GET /admin/openapi.json", () => {
  it("is served as JSON with a request id", () => {
    expect(adminDoc.status, show(adminDoc)).toBe(200);
    expect(adminDoc.headers.get("content-type"), show(adminDoc)).toMatch(/^application\/json/);
    expect(adminDoc.headers.get("x-request-id"), show(adminDoc)).toMatch(/^req_/);
  });

  it("passes the OpenAPI 3.1 schema validator", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(adminDoc.json));
    expect(result.valid, `${JSON.stringify(result.errors, null, 1)}\n${pretty(adminDoc)}`).toBe(true);
    expect(validator.version, pretty(adminDoc)).toBe("3.1");
  });

  it("describes exactly the admin operations, and none of the public ones", () => {
    const operations = Object.entries<any>(adminDoc.json.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`));
    expect(operations.sort(), pretty(adminDoc)).toEqual([...ADMIN_OPERATIONS].sort());
  });

  it("requires the admin token's bearer scheme on every operation and documents the 404 that hides them", () => {
    expect(adminDoc.json.components.securitySchemes.adminToken, pretty(adminDoc)).toMatchObject({ type: "http", scheme: "bearer" });
    for (const [path, item] of Object.entries<any>(adminDoc.json.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        const where = `${method.toUpperCase()} ${path}\n${pretty(adminDoc)}`;
        expect(operation.security, where).toEqual([{ adminToken: [] }]);
        if (path !== "/admin/openapi.json") expect(operation.responses["404"]?.description, where).toMatch(/admin token/);
      }
    }
  });

  it("has no dangling $ref", () => {
    const refs = [...new Set([...adminDoc.text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]))];
    const missing = refs.filter((name) => !Object.hasOwn(adminDoc.json.components?.schemas ?? {}, name));
    expect(missing, pretty(adminDoc)).toEqual([]);
  });
});

describe("the admin API's error body", () => {
  it("carries the hosted service's detail {error_type, message} too, documented with the admin codes' types", async () => {
    const error = adminDoc.json.components.schemas.Error;
    expect(error.required, pretty(adminDoc)).toEqual(expect.arrayContaining(["error", "code", "detail"]));
    const description: string = error.properties.detail.properties.error_type.description;
    for (const code of ["account_not_found", "plan_not_found", "key_not_found", "plan_exists"] as const) {
      expect(description, pretty(adminDoc)).toMatch(new RegExp(`${ERROR_TYPE[code]}: [a-z_, ]*\\b${code}\\b`));
    }
    const missing = await adminCall(server, "PATCH", "/admin/v1/plans/nope", { body: {} });
    expect(missing.json, show(missing)).toEqual({
      error: missing.json.error,
      code: "plan_not_found",
      detail: { error_type: "not_found_error", message: missing.json.error },
    });
  });
});

describe("the admin API's real responses", () => {
  it("match what GET /admin/openapi.json says about them", async () => {
    const conformance = openApiConformance(adminDoc.json);
    /** The response, checked against the document entry for `template` (the path with its {params}). */
    const conforms = async (template: string, request: Promise<CapturedResponse>, status: number) => {
      const response = await request;
      expect(response.status, show(response)).toBe(status);
      conformance.check({ ...response, path: template });
      return response;
    };
    const plan = { name: "documented", requests_per_minute: 5, allowance_questions: 9, price_per_million: "0.5" };
    await conforms("/admin/v1/plans", adminCall(server, "POST", "/admin/v1/plans", { body: plan }), 201);
    await conforms("/admin/v1/plans", adminCall(server, "POST", "/admin/v1/plans", { body: plan }), 409);
    await conforms("/admin/v1/plans", adminCall(server, "POST", "/admin/v1/plans", { body: { name: 1 } }), 400);
    await conforms("/admin/v1/plans", adminCall(server, "GET", "/admin/v1/plans"), 200);
    await conforms("/admin/v1/plans/{plan}", adminCall(server, "PATCH", "/admin/v1/plans/documented", { body: { allowance_questions: 10 } }), 200);
    await conforms("/admin/v1/plans/{plan}", adminCall(server, "PATCH", "/admin/v1/plans/nope", { body: {} }), 404);

    const account = await conforms("/admin/v1/accounts", adminCall(server, "POST", "/admin/v1/accounts", { body: { name: "doc", plan: "documented" } }), 201);
    const id = account.json.id;
    await conforms("/admin/v1/accounts", adminCall(server, "GET", "/admin/v1/accounts"), 200);
    await conforms("/admin/v1/accounts", adminCall(server, "GET", "/admin/v1/accounts?search=do&limit=1&offset=0"), 200);
    await conforms("/admin/v1/accounts", adminCall(server, "GET", "/admin/v1/accounts?limit=0"), 400);
    await conforms(
      "/admin/v1/accounts/{id}/top-ups",
      adminCall(server, "POST", `/admin/v1/accounts/${id}/top-ups`, { body: { amount: "1.25", note: "n" } }),
      201,
    );
    await conforms("/admin/v1/accounts/{id}/top-ups", adminCall(server, "POST", `/admin/v1/accounts/${id}/top-ups`, { body: { amount: "1e3" } }), 400);
    await conforms(
      "/admin/v1/accounts/{id}/adjustments",
      adminCall(server, "POST", `/admin/v1/accounts/${id}/adjustments`, { body: { amount: "-0.25", note: "n" } }),
      201,
    );
    await conforms("/admin/v1/accounts/{id}/adjustments", adminCall(server, "POST", `/admin/v1/accounts/${id}/adjustments`, { body: { amount: "0" } }), 400);
    const key = await conforms("/admin/v1/accounts/{id}/keys", adminCall(server, "POST", `/admin/v1/accounts/${id}/keys`, { body: { name: "k" } }), 201);
    expect((await postJudgment({ url: server.url, key: key.json.key }, TINY_JUDGMENT)).status).toBe(200);
    await conforms("/admin/v1/accounts/{id}", adminCall(server, "GET", `/admin/v1/accounts/${id}`), 200);
    await conforms("/admin/v1/accounts/{id}", adminCall(server, "GET", "/admin/v1/accounts/acct_nope"), 404);
    await conforms("/admin/v1/accounts/{id}/plan", adminCall(server, "PUT", `/admin/v1/accounts/${id}/plan`, { body: { plan: "default" } }), 200);
    await conforms("/admin/v1/accounts/{id}/ledger", adminCall(server, "GET", `/admin/v1/accounts/${id}/ledger?limit=10`), 200);
    await conforms("/admin/v1/accounts/{id}/ledger", adminCall(server, "GET", `/admin/v1/accounts/${id}/ledger?limit=0`), 400);
    await conforms("/admin/v1/accounts/{id}/ledger", adminCall(server, "GET", `/admin/v1/accounts/${id}/ledger?limit=1&before=999999`), 200);
    await conforms("/admin/v1/accounts/{id}/usage", adminCall(server, "GET", `/admin/v1/accounts/${id}/usage`), 200);
    await conforms("/admin/v1/accounts/{id}/usage", adminCall(server, "GET", "/admin/v1/accounts/acct_nope/usage"), 404);
    await conforms("/admin/v1/keys/{id}/revoke", adminCall(server, "POST", `/admin/v1/keys/${key.json.id}/revoke`), 200);
    await conforms("/admin/v1/keys/{id}/revoke", adminCall(server, "POST", "/admin/v1/keys/key_nope/revoke"), 404);
    await conforms("/admin/v1/ledger/check", adminCall(server, "GET", "/admin/v1/ledger/check"), 200);
    await conforms("/admin/v1/ledger/check", adminCall(server, "GET", "/admin/v1/ledger/check", { token: null }), 404);
    await conforms("/admin/v1/overview", adminCall(server, "GET", "/admin/v1/overview"), 200);
  });
});
