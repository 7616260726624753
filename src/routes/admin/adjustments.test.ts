import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall } from "../../testing/admin-client.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { show } from "../../testing/http-client.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/** POST /admin/v1/accounts/{id}/adjustments: the CLI's `balance adjust`, on SQLite and PostgreSQL. */

describe.each(STORE_ENGINES)("on %s", (engine) => {
  let server: TestServer;
  let account: string;
  beforeAll(async () => {
    server = await startTestServer({ store: engine });
    account = (await adminCall(server, "POST", "/admin/v1/accounts", { body: { name: "acme" } })).json.id;
    await adminCall(server, "POST", `/admin/v1/accounts/${account}/top-ups`, { body: { amount: "5" } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("takes or adds money as an adjustment entry with its note; refuses going below zero, zero and a missing note with 400", async () => {
    const taken = await adminCall(server, "POST", `/admin/v1/accounts/${account}/adjustments`, { body: { amount: "-1.50", note: "duplicate top-up" } });
    expect(taken.status, show(taken)).toBe(201);
    expect(taken.json, show(taken)).toMatchObject({
      entry: { kind: "adjustment", amount_micro: -1_500_000, note: "duplicate top-up" },
      balance_micro: 3_500_000,
      balance: "3.50",
    });
    for (const body of [{ amount: "-3.500001", note: "x" }, { amount: "0.00", note: "x" }, { amount: "1" }, { amount: "+1", note: "x" }]) {
      const refused = await adminCall(server, "POST", `/admin/v1/accounts/${account}/adjustments`, { body });
      expect(refused.status, show(refused)).toBe(400);
    }
    const missing = await adminCall(server, "POST", "/admin/v1/accounts/acct_missing/adjustments", { body: { amount: "1", note: "x" } });
    expect(missing.status, show(missing)).toBe(404);
    const check = await adminCall(server, "GET", "/admin/v1/ledger/check");
    expect(check.json, show(check)).toMatchObject({ ok: true });
  });
});
