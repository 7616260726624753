import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall, TINY_JUDGMENT } from "../../testing/admin-client.js";
import { postJudgment, show } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../../testing/server.js";

/** POST /admin/v1/accounts/{id}/keys and POST /admin/v1/keys/{id}/revoke; no secret in the logs; on SQLite and on PostgreSQL. */

describe.each(STORE_ENGINES)("on %s", (engine) => {
  let server: TestServer;
  let accountId: string;
  /** Every plaintext key this file sees, checked against the logs at the end. */
  const secrets: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ store: engine });
    secrets.push(server.key);
    const account = await adminCall(server, "POST", "/admin/v1/accounts", { body: { name: "keyed", plan: "test unlimited" } });
    accountId = account.json.id;
  });
  afterAll(async () => {
    await server?.close();
  });

  async function createKey(body: unknown = {}) {
    const response = await adminCall(server, "POST", `/admin/v1/accounts/${accountId}/keys`, { body });
    expect(response.status, show(response)).toBe(201);
    secrets.push(response.json.key);
    return response;
  }

  describe("POST /admin/v1/accounts/{id}/keys", () => {
    it("returns the plaintext key once, uncacheable, and afterwards only its prefix", async () => {
      const created = await createKey({ name: "ci runner" });
      expect(created.json, show(created)).toMatchObject({ account_id: accountId, name: "ci runner", revoked_at: null, last_used_at: null });
      expect(created.json.key, show(created)).toMatch(/^tjs_/);
      expect(created.json.key.startsWith(created.json.prefix), show(created)).toBe(true);
      expect(created.json.prefix.length, show(created)).toBeLessThan(created.json.key.length);
      expect(created.headers.get("cache-control"), show(created)).toBe("no-store");

      const detail = await adminCall(server, "GET", `/admin/v1/accounts/${accountId}`);
      const listed = detail.json.keys.find((key: any) => key.id === created.json.id);
      expect(listed, show(detail)).toEqual({ ...created.json, key: undefined });
      expect(listed.key, show(detail)).toBeUndefined();
      expect(detail.text, "the plaintext key must not be shown again").not.toContain(created.json.key);
      const accounts = await adminCall(server, "GET", "/admin/v1/accounts");
      expect(accounts.text, "the plaintext key must not be shown again").not.toContain(created.json.key);
    });

    it("gives a key that answers on POST /v1/systemone for its account", async () => {
      const { json: created } = await createKey();
      const judged = await postJudgment({ url: server.url, key: created.key }, TINY_JUDGMENT);
      expect(judged.status, show(judged)).toBe(200);
      const detail = await adminCall(server, "GET", `/admin/v1/accounts/${accountId}`);
      expect(detail.json.account.usage.used, show(detail)).toBeGreaterThanOrEqual(1);
    });

    it("accepts no name, refuses a bad body (400) and an unknown account (404)", async () => {
      expect((await createKey({})).json.name).toBeNull();
      for (const body of [{ name: 7 }, { name: "" }, { label: "x" }, "[]", ""]) {
        expectErrorResponse(await adminCall(server, "POST", `/admin/v1/accounts/${accountId}/keys`, { body }), 400);
      }
      expectErrorResponse(await adminCall(server, "POST", "/admin/v1/accounts/acct_nope/keys", { body: {} }), 404, "account_not_found");
    });
  });

  describe("POST /admin/v1/keys/{id}/revoke", () => {
    it("revokes the key: its very next request gets 401; revoking again changes nothing", async () => {
      const { json: created } = await createKey({ name: "to revoke" });
      const caller = { url: server.url, key: created.key };
      expect((await postJudgment(caller, TINY_JUDGMENT)).status).toBe(200);

      const revoked = await adminCall(server, "POST", `/admin/v1/keys/${created.id}/revoke`);
      expect(revoked.status, show(revoked)).toBe(200);
      expect(revoked.json, show(revoked)).toMatchObject({ id: created.id, prefix: created.prefix });
      expect(revoked.json.revoked_at, show(revoked)).not.toBeNull();
      expectErrorResponse(await postJudgment(caller, TINY_JUDGMENT), 401, "invalid_api_key");

      const again = await adminCall(server, "POST", `/admin/v1/keys/${created.id}/revoke`);
      expect(again.json.revoked_at, show(again)).toBe(revoked.json.revoked_at);
      expect((await postJudgment(server, TINY_JUDGMENT)).status, "other keys keep working").toBe(200);
    });

    it("answers 404 key_not_found for an unknown id, and for a prefix (keys are revoked by id)", async () => {
      const { json: created } = await createKey();
      expectErrorResponse(await adminCall(server, "POST", "/admin/v1/keys/key_nope/revoke"), 404, "key_not_found");
      expectErrorResponse(await adminCall(server, "POST", `/admin/v1/keys/${created.prefix}/revoke`), 404, "key_not_found");
      expect((await postJudgment({ url: server.url, key: created.key }, TINY_JUDGMENT)).status, "the key still works").toBe(200);
    });
  });

  describe("the logs", () => {
    it("contain no plaintext key and no admin token, even from refused requests", async () => {
      // Secrets sent where they do not belong: an API key to the admin API, the admin token as an API key.
      await adminCall(server, "GET", "/admin/v1/accounts", { token: server.key });
      await postJudgment(server, TINY_JUDGMENT, { key: TEST_ADMIN_TOKEN });
      await adminCall(server, "GET", "/admin/v1/plans", { token: `${TEST_ADMIN_TOKEN}x` });
      const log = server.logLines.join("");
      expect(server.logLines.length, "the server logged nothing at all").toBeGreaterThan(10);
      expect(secrets.length).toBeGreaterThanOrEqual(6);
      for (const secret of secrets) expect(log.includes(secret), `a plaintext key is in the logs:\n${log}`).toBe(false);
      expect(log.includes(TEST_ADMIN_TOKEN), `the admin token is in the logs:\n${log}`).toBe(false);
    });
  });
});
