import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall } from "../../testing/admin-client.js";
import { show } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/** POST /admin/v1/accounts/{id}/top-ups: euro strings in, exact micro-euros kept, exact strings out; on SQLite and on PostgreSQL, since money and accounts go through them. */

describe.each(STORE_ENGINES)("on %s", (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ store: engine });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function newAccount(name: string): Promise<string> {
    const created = await adminCall(server, "POST", "/admin/v1/accounts", { body: { name } });
    expect(created.status, show(created)).toBe(201);
    return created.json.id;
  }

  const topUp = (accountId: string, body: unknown) => adminCall(server, "POST", `/admin/v1/accounts/${accountId}/top-ups`, { body });

  describe("POST /admin/v1/accounts/{id}/top-ups", () => {
    it("adds exactly the amount typed, down to one micro-euro, and answers with the new balance", async () => {
      const id = await newAccount("exact money");
      const first = await topUp(id, { amount: "0.000001", note: "smallest unit" });
      expect(first.status, show(first)).toBe(201);
      expect(first.json.entry, show(first)).toMatchObject({ kind: "top_up", amount_micro: 1, amount: "0.000001", note: "smallest unit" });
      expect([first.json.balance_micro, first.json.balance], show(first)).toEqual([1, "0.000001"]);

      const second = await topUp(id, { amount: "12.345678" });
      expect([second.json.balance_micro, second.json.balance], show(second)).toEqual([12_345_679, "12.345679"]);

      // 0.1 + 0.2 is where floating point would show: 0.30000000000000004.
      await topUp(id, { amount: "0.1" });
      const third = await topUp(id, { amount: "0.2" });
      expect([third.json.balance_micro, third.json.balance], show(third)).toEqual([12_645_679, "12.645679"]);
      expect((await server.store.accounts.get(id))?.balanceMicro, "the stored balance").toBe(12_645_679);
    });

    it("shows whole amounts with two decimals and keeps amounts up to 2^53 - 1 micro-euros exactly", async () => {
      const id = await newAccount("big money");
      const response = await topUp(id, { amount: "9007199254.740991" });
      expect(response.status, show(response)).toBe(201);
      expect([response.json.balance_micro, response.json.balance], show(response)).toEqual([Number.MAX_SAFE_INTEGER, "9007199254.740991"]);
      const small = await topUp(await newAccount("round money"), { amount: "12.5" });
      expect(small.json.balance, show(small)).toBe("12.50");
    });

    const refused: [what: string, body: unknown][] = [
      ["a negative amount", { amount: "-1" }],
      ["an exponent", { amount: "1e3" }],
      ["seven decimals", { amount: "1.0000001" }],
      ["a JSON number", { amount: 12.5 }],
      ["a whole JSON number", { amount: 5 }],
      ["zero", { amount: "0" }],
      ["zero with decimals", { amount: "0.000000" }],
      ["a comma as decimal separator", { amount: "12,50" }],
      ["a currency sign", { amount: "€12.50" }],
      ["a leading plus", { amount: "+5" }],
      ["hexadecimal", { amount: "0x10" }],
      ["infinity", { amount: "Infinity" }],
      ["an empty string", { amount: "" }],
      ["eleven digits of euros", { amount: "12345678901" }],
      ["one micro-euro more than 2^53 - 1", { amount: "9007199254.740992" }],
      ["no amount", { note: "forgot the amount" }],
      ["an unknown field", { amount: "1", currency: "EUR" }],
      ["a note over 500 characters", { amount: "1", note: "n".repeat(501) }],
      ["a JSON array", [{ amount: "1" }]],
      ["a JSON string", '"12.50"'],
      ["malformed JSON", "{amount: 1"],
    ];
    for (const [what, body] of refused) {
      it(`refuses ${what} with 400 and changes nothing`, async () => {
        const id = await newAccount(`refused: ${what}`);
        const response = await topUp(id, body);
        expectErrorResponse(response, 400);
        expect(["invalid_request", "invalid_json"], show(response)).toContain(response.json.code);
        expect((await server.store.accounts.get(id))?.balanceMicro, `the balance changed\n${show(response)}`).toBe(0);
        expect(await server.store.ledger.entries(id), show(response)).toEqual([]);
      });
    }

    it("refuses a top-up that would take the balance past the largest amount kept (400)", async () => {
      const id = await newAccount("overflow");
      expect((await topUp(id, { amount: "9000000000" })).status).toBe(201);
      const response = await topUp(id, { amount: "9000000000" });
      expectErrorResponse(response, 400, "invalid_request");
      expect((await server.store.accounts.get(id))?.balanceMicro).toBe(9_000_000_000_000_000);
    });

    it("answers 404 account_not_found for an unknown account", async () => {
      expectErrorResponse(await topUp("acct_doesnotexist", { amount: "1" }), 404, "account_not_found");
    });

    it("leaves the ledger consistent with every balance", async () => {
      const check = await adminCall(server, "GET", "/admin/v1/ledger/check");
      expect(check.json, show(check)).toMatchObject({ ok: true, mismatches: [] });
    });
  });
});
