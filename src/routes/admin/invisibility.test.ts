import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall } from "../../testing/admin-client.js";
import { call, postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../../testing/server.js";

/**
 * Without the exact admin token, the admin API does not exist: every path under /admin answers
 * as a path no route serves would, on a server where the admin API is switched off.
 */

let server: TestServer;
/** The same app with no admin token configured: its /admin paths are truly unknown. */
let adminOff: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  adminOff = await startTestServer({ adminToken: null, engine: server.engine });
});
afterAll(async () => {
  await adminOff?.close();
  await server?.close();
});

/** Every admin endpoint, plus the document, the bare prefix and paths no admin route serves. */
const ADMIN_REQUESTS: [method: string, path: string, body?: unknown][] = [
  ["GET", "/admin/v1/plans"],
  ["POST", "/admin/v1/plans", { name: "p", requests_per_minute: 1, allowance_questions: 1, price_per_million: "1" }],
  ["PATCH", "/admin/v1/plans/default", { requests_per_minute: 1 }],
  ["GET", "/admin/v1/accounts"],
  ["POST", "/admin/v1/accounts", { name: "intruder" }],
  ["GET", "/admin/v1/accounts/ACCOUNT"],
  ["PUT", "/admin/v1/accounts/ACCOUNT/plan", { plan: "default" }],
  ["POST", "/admin/v1/accounts/ACCOUNT/top-ups", { amount: "1000" }],
  ["POST", "/admin/v1/accounts/ACCOUNT/adjustments", { amount: "-1", note: "n" }],
  ["GET", "/admin/v1/accounts/ACCOUNT/ledger?limit=5"],
  ["GET", "/admin/v1/accounts/ACCOUNT/usage"],
  ["GET", "/admin/v1/accounts?search=test&limit=5"],
  ["GET", "/admin/v1/overview"],
  ["POST", "/admin/v1/accounts/ACCOUNT/keys", {}],
  ["POST", "/admin/v1/keys/key_anything/revoke"],
  ["GET", "/admin/v1/ledger/check"],
  ["GET", "/admin/openapi.json"],
  ["GET", "/admin"],
  ["GET", "/admin/"],
  ["GET", "/admin/v1/no-such-endpoint"],
  ["DELETE", "/admin/v1/accounts"],
];

const WITHOUT_THE_TOKEN: [who: string, authorization: () => string | null][] = [
  ["no Authorization header", () => null],
  ["the test account's API key", () => `Bearer ${server.key}`],
  ["a wrong token", () => "Bearer not-the-admin-token-0123456789abcdef"],
  ["the token with one character more", () => `Bearer ${TEST_ADMIN_TOKEN}0`],
  ["the token with one character less", () => `Bearer ${TEST_ADMIN_TOKEN.slice(0, -1)}`],
  ["the token without the Bearer scheme", () => TEST_ADMIN_TOKEN],
  ["the token as Basic credentials", () => `Basic ${Buffer.from(`admin:${TEST_ADMIN_TOKEN}`).toString("base64")}`],
  ["an empty bearer", () => "Bearer "],
];

function send(target: TestServer, method: string, path: string, body: unknown, authorization: string | null) {
  const concrete = path.replace("ACCOUNT", server.accountId);
  return authorization === null ? adminCall(target, method, concrete, { body, token: null }) : adminCall(target, method, concrete, { body, authorization });
}

/** Same status, same body, same header names: only the request id differs. */
function expectIndistinguishable(response: CapturedResponse, unknown: CapturedResponse, note: string): void {
  const message = `${note}\n${show(response, "admin API:")}\n${show(unknown, "admin API off:")}`;
  expect(response.status, message).toBe(404);
  expect(response.status, message).toBe(unknown.status);
  expect(response.text, message).toBe(unknown.text);
  const names = (r: CapturedResponse) => [...r.headers.keys()].filter((name) => name !== "date").sort();
  expect(names(response), message).toEqual(names(unknown));
  expect(response.headers.get("content-type"), message).toBe(unknown.headers.get("content-type"));
}

describe("the admin API without the admin token", () => {
  for (const [who, authorization] of WITHOUT_THE_TOKEN) {
    it(`answers every /admin path with ${who} exactly like an unknown path`, async () => {
      const balance = (await server.store.accounts.get(server.accountId))?.balanceMicro;
      for (const [method, path, body] of ADMIN_REQUESTS) {
        const response = await send(server, method, path, body, authorization());
        const unknown = await send(adminOff, method, path, body, authorization());
        expectIndistinguishable(response, unknown, `${method} ${path} with ${who}`);
        expectErrorResponse(response, 404, "not_found");
      }
      expect((await server.store.accounts.get(server.accountId))?.balanceMicro, "a refused request changed a balance").toBe(balance);
      expect(
        (await server.store.accounts.list()).some((account) => account.name === "intruder"),
        "a refused request created an account",
      ).toBe(false);
    });
  }
});

describe("the admin API with the admin token", () => {
  it("answers every admin endpoint (the unknown key's revocation with key_not_found, the rest with 2xx)", async () => {
    for (const [method, path, body] of ADMIN_REQUESTS.slice(0, 13)) {
      const response = await send(server, method, path, body, `Bearer ${TEST_ADMIN_TOKEN}`);
      if (path.includes("key_anything")) expectErrorResponse(response, 404, "key_not_found");
      else expect([200, 201], show(response)).toContain(response.status);
    }
  });

  it("accepts the scheme in any case and spaces around the token", async () => {
    for (const authorization of [`bearer ${TEST_ADMIN_TOKEN}`, `BEARER   ${TEST_ADMIN_TOKEN} `]) {
      const response = await adminCall(server, "GET", "/admin/v1/plans", { authorization });
      expect(response.status, show(response)).toBe(200);
    }
  });

  it("still answers unknown admin paths exactly like unknown paths", async () => {
    const unserved = ADMIN_REQUESTS.slice(ADMIN_REQUESTS.findIndex(([, path]) => path === "/admin/openapi.json") + 1);
    expect(unserved.map(([, path]) => path)).toEqual(["/admin", "/admin/", "/admin/v1/no-such-endpoint", "/admin/v1/accounts"]);
    for (const [method, path] of unserved) {
      const response = await send(server, method, path, undefined, `Bearer ${TEST_ADMIN_TOKEN}`);
      const unknown = await send(adminOff, method, path, undefined, `Bearer ${TEST_ADMIN_TOKEN}`);
      expectIndistinguishable(response, unknown, `${method} ${path} with the token`);
    }
  });
});

describe("the admin token outside the admin API", () => {
  it("is not an API key: POST /v1/systemone answers 401", async () => {
    expectErrorResponse(await postJudgment(server, { questions: {} }, { key: TEST_ADMIN_TOKEN }), 401);
  });
});

describe("a server without an admin token", () => {
  it("has no admin API even for the token the tests use", async () => {
    for (const [method, path, body] of ADMIN_REQUESTS) {
      expectErrorResponse(await send(adminOff, method, path, body, `Bearer ${TEST_ADMIN_TOKEN}`), 404, "not_found");
    }
  });

  it("has no console either: GET /console is 404 (the console only exists with the admin API)", async () => {
    for (const path of ["/console", "/console/main.js"]) {
      const response = await call(adminOff.url, path);
      expectErrorResponse(response, 404, "not_found");
      const error = `no route for GET ${path}`;
      expect(response.text, show(response)).toBe(JSON.stringify({ error, code: "not_found", detail: { error_type: "not_found_error", message: error } }));
    }
  });
});
