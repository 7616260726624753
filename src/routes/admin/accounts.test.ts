import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall, TINY_JUDGMENT } from "../../testing/admin-client.js";
import { postJudgment, show } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/** The account endpoints: list, create, get, set plan, and the ledger; on SQLite and on PostgreSQL, since money and accounts go through them. */

describe.each(STORE_ENGINES)("on %s", (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ store: engine });
  });
  afterAll(async () => {
    await server?.close();
  });

  const createAccount = (body: unknown) => adminCall(server, "POST", "/admin/v1/accounts", { body });

  describe("POST /admin/v1/accounts", () => {
    it("creates an account on the default plan with a zero balance (201), its name kept verbatim", async () => {
      const name = `Evil <script>alert("x")</script> & Co`;
      const response = await createAccount({ name });
      expect(response.status, show(response)).toBe(201);
      expect(response.json, show(response)).toMatchObject({
        name,
        plan: { id: "plan_default", name: "default" },
        balance_micro: 0,
        balance: "0.00",
        reserved_micro: 0,
        usage: { used: 0, reserved: 0, allowance: 1000, percent_used: 0 },
      });
      expect(response.json.id, show(response)).toMatch(/^acct_/);
      expect(Date.parse(response.json.usage.period_end) > Date.parse(response.json.usage.period_start), show(response)).toBe(true);
    });

    it("puts the account on the plan named, by name or id", async () => {
      const byName = await createAccount({ name: "on test plan", plan: "test unlimited" });
      expect(byName.json.plan.name, show(byName)).toBe("test unlimited");
      const byId = await createAccount({ name: "on default", plan: "plan_default" });
      expect(byId.json.plan.name, show(byId)).toBe("default");
    });

    it("answers 404 plan_not_found for an unknown plan", async () => {
      expectErrorResponse(await createAccount({ name: "x", plan: "platinum" }), 404, "plan_not_found");
    });

    it("refuses a body over 16 KB with 413 before reading it all", async () => {
      expectErrorResponse(await createAccount({ name: "x", padding: "p".repeat(17 * 1024) }), 413, "body_too_large");
    });

    for (const [what, body] of [
      ["no name", {}],
      ["a blank name", { name: " " }],
      ["a name that is not a string", { name: 42 }],
      ["a name over 200 characters", { name: "a".repeat(201) }],
      ["an unknown field", { name: "x", balance: "100" }],
      ["malformed JSON", "{name"],
    ] as const) {
      it(`refuses ${what} with 400`, async () => {
        expectErrorResponse(await createAccount(body), 400);
      });
    }
  });

  describe("GET /admin/v1/accounts", () => {
    it("lists every account with its plan name, balance and current-period usage", async () => {
      const created = await createAccount({ name: "listed", plan: "test unlimited" });
      await adminCall(server, "POST", `/admin/v1/accounts/${created.json.id}/top-ups`, { body: { amount: "3.5" } });
      const response = await adminCall(server, "GET", "/admin/v1/accounts");
      expect(response.status, show(response)).toBe(200);
      const listed = response.json.accounts.find((account: any) => account.id === created.json.id);
      expect(listed, show(response)).toMatchObject({ name: "listed", plan: { name: "test unlimited" }, balance_micro: 3_500_000, balance: "3.50" });
      expect(
        response.json.accounts.map((account: any) => account.id),
        show(response),
      ).toContain(server.accountId);
    });
  });

  describe("GET /admin/v1/accounts/{id}", () => {
    it("shows the account, its plan, its keys (prefix only) and its recent ledger; usage follows requests", async () => {
      const judged = await postJudgment(server, TINY_JUDGMENT);
      expect(judged.status, show(judged)).toBe(200);
      const response = await adminCall(server, "GET", `/admin/v1/accounts/${server.accountId}`);
      expect(response.status, show(response)).toBe(200);
      const { account, plan, keys, ledger } = response.json;
      expect(account, show(response)).toMatchObject({ id: server.accountId, name: "test account", usage: { used: 1, reserved: 0 } });
      expect(plan, show(response)).toMatchObject({ name: "test unlimited", allowance_questions: 1_000_000_000 });
      expect(keys, show(response)).toEqual([
        expect.objectContaining({ name: "test key", prefix: server.key.slice(0, keys[0].prefix.length), revoked_at: null }),
      ]);
      expect(keys[0].last_used_at, show(response)).not.toBeNull();
      expect(response.text, "the plaintext key must never be shown again").not.toContain(server.key);
      expect(ledger[0], show(response)).toMatchObject({ kind: "plan", questions: 1, amount_micro: 0, amount: "0.00" });
      expect(ledger[0].input_tokens, show(response)).toBeGreaterThan(0);
    });

    it("answers 404 account_not_found for an unknown account", async () => {
      expectErrorResponse(await adminCall(server, "GET", "/admin/v1/accounts/acct_nope"), 404, "account_not_found");
    });
  });

  describe("PUT /admin/v1/accounts/{id}/plan", () => {
    it("moves the account to the plan named; its allowance and percentage follow", async () => {
      await adminCall(server, "POST", "/admin/v1/plans", {
        body: { name: "tiny", requests_per_minute: 10, allowance_questions: 3, price_per_million: "1" },
      });
      const created = await createAccount({ name: "mover" });
      const response = await adminCall(server, "PUT", `/admin/v1/accounts/${created.json.id}/plan`, { body: { plan: "tiny" } });
      expect(response.status, show(response)).toBe(200);
      expect(response.json, show(response)).toMatchObject({ plan: { name: "tiny" }, usage: { allowance: 3, percent_used: 0 } });
      expect((await server.store.accounts.get(created.json.id))?.planId).toBe(response.json.plan.id);
    });

    it("answers 404 for an unknown account or plan, 400 for a bad body", async () => {
      expectErrorResponse(await adminCall(server, "PUT", "/admin/v1/accounts/acct_nope/plan", { body: { plan: "default" } }), 404, "account_not_found");
      const path = `/admin/v1/accounts/${server.accountId}/plan`;
      expectErrorResponse(await adminCall(server, "PUT", path, { body: { plan: "platinum" } }), 404, "plan_not_found");
      expectErrorResponse(await adminCall(server, "PUT", path, { body: { plan: 1 } }), 400, "invalid_request");
      expectErrorResponse(await adminCall(server, "PUT", path, { body: {} }), 400, "invalid_request");
      expect((await server.store.accounts.get(server.accountId))?.planId).not.toBe("plan_default");
    });
  });

  describe("GET /admin/v1/accounts/{id}/ledger", () => {
    it("lists entries newest first, as many as ?limit= asks", async () => {
      const { json: account } = await createAccount({ name: "ledger" });
      for (const amount of ["1", "2", "3"]) {
        await adminCall(server, "POST", `/admin/v1/accounts/${account.id}/top-ups`, { body: { amount, note: `top-up ${amount}` } });
      }
      const all = await adminCall(server, "GET", `/admin/v1/accounts/${account.id}/ledger`);
      expect(
        all.json.entries.map((entry: any) => entry.amount),
        show(all),
      ).toEqual(["3.00", "2.00", "1.00"]);
      const two = await adminCall(server, "GET", `/admin/v1/accounts/${account.id}/ledger?limit=2`);
      expect(
        two.json.entries.map((entry: any) => entry.note),
        show(two),
      ).toEqual(["top-up 3", "top-up 2"]);
    });

    it("refuses a limit that is not a whole number from 1 to 500 (400), and unknown accounts (404)", async () => {
      for (const limit of ["0", "501", "abc", "1.5", "-1", ""]) {
        expectErrorResponse(await adminCall(server, "GET", `/admin/v1/accounts/${server.accountId}/ledger?limit=${limit}`), 400, "invalid_request");
      }
      expectErrorResponse(await adminCall(server, "GET", "/admin/v1/accounts/acct_nope/ledger"), 404, "account_not_found");
    });
  });

  describe("GET /admin/v1/ledger/check", () => {
    it("reports every account consistent with its ledger", async () => {
      const response = await adminCall(server, "GET", "/admin/v1/ledger/check");
      expect(response.status, show(response)).toBe(200);
      expect(response.json, show(response)).toEqual({ ok: true, accounts: (await server.store.accounts.list()).length, mismatches: [] });
    });
  });
});
