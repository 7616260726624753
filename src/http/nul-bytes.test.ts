import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall, TINY_JUDGMENT } from "../testing/admin-client.js";
import { STORE_ENGINES } from "../testing/databases.js";
import { hangingEngine } from "../testing/hanging-engine.js";
import { call, show, type CapturedResponse } from "../testing/http-client.js";
import { startTestServer, type TestServer } from "../testing/server.js";

/**
 * A NUL (%00 in the URL, \u0000 in a JSON string) anywhere a client can put one is refused with
 * 400 invalid_request and changes nothing, on either store: PostgreSQL cannot hold NUL in text
 * and answered such requests with 500 internal_error.
 */

const NUL = "\u0000";

/** method, path, JSON body (sent as the admin unless `key`). */
const REQUESTS: [what: string, method: string, path: string, body?: unknown, key?: true][] = [
  ["an account id", "GET", "/admin/v1/accounts/%00"],
  ["an account id inside a longer one", "GET", "/admin/v1/accounts/acct_%00x/ledger"],
  ["the id of a top-up", "POST", "/admin/v1/accounts/%00/top-ups", { amount: "1.00", note: "n" }],
  ["a query parameter", "GET", "/admin/v1/audit?account=acct_%00"],
  ["a query parameter's name", "GET", "/admin/v1/accounts?sea%00rch=x"],
  ["an admin token's name", "POST", "/admin/v1/admin-tokens", { name: `ops${NUL}` }],
  ["an account's name", "POST", "/admin/v1/accounts", { name: `a${NUL}b` }],
  ["a plan's name", "POST", "/admin/v1/plans", { name: NUL, requests_per_minute: 1, allowance_questions: 1, price_per_million: "1" }],
  ["a plan's path parameter", "PATCH", "/admin/v1/plans/%00", { requests_per_minute: 2 }],
  ["a key id", "POST", "/admin/v1/keys/key_%00/revoke"],
  ["a JSON key", "POST", "/admin/v1/accounts", { [`na${NUL}me`]: "x", name: "y" }],
  ["a nested string of a judgment", "POST", "/v1/systemone", { ...TINY_JUDGMENT, state: `paid${NUL}twice` }, true],
  ["a question's name", "POST", "/v1/systemone", { state: "s", questions: { [`q${NUL}`]: { type: "noul", instructions: "?" } } }, true],
  ["the query of a public route", "GET", "/v1/models?x=%00", undefined, true],
  ["a path no route serves", "GET", "/nowhere%00"],
];

describe.each(STORE_ENGINES)("a NUL on %s", (engine) => {
  let server: TestServer;
  let before: Record<string, string[]>;
  beforeAll(async () => {
    server = await startTestServer({ store: engine, engine: hangingEngine() });
    before = await stored(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  const send = (method: string, path: string, body: unknown, key?: true): Promise<CapturedResponse> =>
    key
      ? call(server.url, path, {
          method,
          headers: { authorization: `Bearer ${server.key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
      : adminCall(server, method, path, { body });

  it.each(REQUESTS)("in %s is refused with 400 invalid_request", async (_what, method, path, body, key) => {
    const response = await send(method, path, body, key);
    expect(response.status, show(response)).toBe(400);
    expect(response.json, show(response)).toMatchObject({
      code: "invalid_request",
      error: expect.stringContaining("NUL"),
      detail: { error_type: "api_usage_error" },
    });
  });

  it("in a /v1/decisions request is refused in the OpenAI error shape, URL or body", async () => {
    const decision = { model: "gpt-6-luna", input: `a${NUL}`, decisions: { ok: { type: "boolean" } } };
    for (const path of ["/v1/decisions?x=%00", "/v1/decisions"]) {
      const response = await send("POST", path, decision, true);
      expect(response.status, show(response)).toBe(400);
      expect(response.json?.error, show(response)).toMatchObject({ code: "invalid_request", message: expect.stringContaining("NUL") });
    }
  });

  it("changed nothing in the database (beyond the key's use and rate window), and the same fields without the NUL still work", async () => {
    expect(await stored(server)).toEqual(before);
    const created = await adminCall(server, "POST", "/admin/v1/accounts", { body: { name: "ab" } });
    expect(created.status, show(created)).toBe(201);
    const missing = await adminCall(server, "GET", "/admin/v1/accounts/acct_x");
    expect(missing.status, show(missing)).toBe(404);
  });
});

/** Every table, less what a key's authenticated request always touches before its body is read. */
async function stored(server: TestServer): Promise<Record<string, string[]>> {
  const { rate_windows: _counted, api_keys, ...rest } = await server.database.dump();
  return { ...rest, api_keys: api_keys.map((row) => row.replace(/"last_used_at":\d+/, '"last_used_at":null')) };
}
