import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall, TINY_JUDGMENT } from "../../testing/admin-client.js";
import { postJudgment, postWithKey, show } from "../../testing/http-client.js";
import { expectErrorResponse, okJson } from "../../testing/route-assertions.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../../testing/server.js";

/**
 * Renaming, disabling and enabling accounts, named admin tokens and the audit log through the
 * admin API, on SQLite and PostgreSQL.
 */
describe.each(STORE_ENGINES)("on %s", (engine) => {
  let server: TestServer;
  const secrets: string[] = [TEST_ADMIN_TOKEN];

  beforeAll(async () => {
    server = await startTestServer({ store: engine });
    secrets.push(server.key);
  });
  afterAll(async () => {
    await server?.close();
  });

  const audit = async (query = "", token?: string) => okJson(await adminCall(server, "GET", `/admin/v1/audit${query}`, { token }));

  it("renames an account, and the log says who did it and from what to what", async () => {
    const created = await adminCall(server, "POST", "/admin/v1/accounts", { body: { name: "Acme" } });
    const id = created.json.id;
    const renamed = await adminCall(server, "PATCH", `/admin/v1/accounts/${id}`, { body: { name: "  Acme Ltd " } });
    expect(okJson(renamed)).toMatchObject({ id, name: "Acme Ltd", disabled: false, disabled_at: null });
    expectErrorResponse(await adminCall(server, "PATCH", `/admin/v1/accounts/${id}`, { body: { name: " " } }), 400, "invalid_request");
    expectErrorResponse(await adminCall(server, "PATCH", "/admin/v1/accounts/acct_nope", { body: { name: "x" } }), 404, "account_not_found");
    const { entries } = await audit(`?account=${id}`);
    expect(
      entries.map((e: any) => [e.actor, e.action, e.object]),
      JSON.stringify(entries),
    ).toEqual([
      ["env-token", "account.rename", { kind: "account", id }],
      ["env-token", "account.create", { kind: "account", id }],
    ]);
    expect(entries[0]).toMatchObject({ actor_token_id: null, account_id: id, details: { from: "Acme", to: "Acme Ltd" } });
    expect(Date.parse(entries[0].at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("a disabled account's key gets 401 account_disabled on its next request; enabling restores it; nothing is deleted", async () => {
    const judged = await postJudgment(server, TINY_JUDGMENT);
    expect(judged.status, show(judged)).toBe(200);
    const disabled = await adminCall(server, "POST", `/admin/v1/accounts/${server.accountId}/disable`);
    expect(okJson(disabled)).toMatchObject({ id: server.accountId, disabled: true });
    expect(Date.parse(disabled.json.disabled_at)).toBeGreaterThan(0);
    expectErrorResponse(await postJudgment(server, TINY_JUDGMENT), 401, "account_disabled");
    const decisions = await postWithKey(server, "/v1/decisions", { model: "gpt-6-luna", input: "x", questions: {} });
    expect(decisions.status, show(decisions)).toBe(401);

    const listed = okJson(await adminCall(server, "GET", `/admin/v1/accounts?search=${server.accountId}`));
    expect(listed.accounts[0], JSON.stringify(listed)).toMatchObject({ id: server.accountId, disabled: true });
    const detail = okJson(await adminCall(server, "GET", `/admin/v1/accounts/${server.accountId}`));
    expect(detail.account.disabled).toBe(true);
    expect(detail.keys.length).toBeGreaterThan(0);
    expect(detail.ledger.length).toBeGreaterThan(0);

    // Twice changes nothing: the first time stays.
    const again = okJson(await adminCall(server, "POST", `/admin/v1/accounts/${server.accountId}/disable`));
    expect(again.disabled_at).toBe(disabled.json.disabled_at);
    expect(okJson(await adminCall(server, "POST", `/admin/v1/accounts/${server.accountId}/enable`))).toMatchObject({ disabled: false, disabled_at: null });
    const restored = await postJudgment(server, TINY_JUDGMENT);
    expect(restored.status, show(restored)).toBe(200);
    const { entries } = await audit(`?account=${server.accountId}&limit=2`);
    expect(entries.map((e: any) => e.action)).toEqual(["account.enable", "account.disable"]);
    expectErrorResponse(await adminCall(server, "POST", "/admin/v1/accounts/acct_nope/disable"), 404, "account_not_found");
  });

  it("named admin tokens: created once, accepted beside JUDGE_ADMIN_TOKEN, named in the log, revocable at once", async () => {
    const created = await adminCall(server, "POST", "/admin/v1/admin-tokens", { body: { name: "alice" } });
    expect(created.status, show(created)).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const { token, id } = created.json;
    secrets.push(token);
    expect(token, show(created)).toMatch(/^tja_/);

    const account = await adminCall(server, "POST", "/admin/v1/accounts", { body: { name: "by alice" }, token });
    expect(account.status, show(account)).toBe(201);
    const topUp = await adminCall(server, "POST", `/admin/v1/accounts/${account.json.id}/top-ups`, { body: { amount: "1.50", note: "n" }, token });
    expect(topUp.status, show(topUp)).toBe(201);
    const { entries } = await audit(`?account=${account.json.id}`, token);
    expect(entries.map((e: any) => [e.actor, e.actor_token_id, e.action])).toEqual([
      ["token:alice", id, "balance.top_up"],
      ["token:alice", id, "account.create"],
    ]);
    expect(entries[0].details).toMatchObject({ amount_micro: 1_500_000, note: "n" });

    const listed = okJson(await adminCall(server, "GET", "/admin/v1/admin-tokens"));
    expect(
      listed.tokens.find((t: any) => t.id === id),
      JSON.stringify(listed),
    ).toMatchObject({ name: "alice", revoked_at: null });
    expect(JSON.stringify(listed)).not.toContain(token);
    const log = okJson(await adminCall(server, "GET", "/admin/v1/audit?limit=500"));
    expect(JSON.stringify(log), "the log never holds a token or key").not.toMatch(/tja_[0-9A-Za-z]{40}|tjs_[0-9A-Za-z]{40}/);
    expect(log.entries.find((e: any) => e.action === "admin_token.create")).toMatchObject({ actor: "env-token", object: { kind: "admin_token", id } });

    const revoked = await adminCall(server, "POST", `/admin/v1/admin-tokens/${id}/revoke`, { token });
    expect(okJson(revoked).revoked_at).not.toBeNull();
    expectErrorResponse(await adminCall(server, "GET", "/admin/v1/accounts", { token }), 404, "not_found");
    expectErrorResponse(await adminCall(server, "POST", "/admin/v1/admin-tokens/adm_nope/revoke"), 404, "admin_token_not_found");
    expectErrorResponse(await adminCall(server, "POST", "/admin/v1/admin-tokens", { body: { name: "" } }), 400, "invalid_request");
  });

  it("pages the log with limit and before, and refuses a bad page with 400", async () => {
    const first = await audit("?limit=1");
    expect(first.entries).toHaveLength(1);
    const second = await audit(`?limit=1&before=${first.next_before}`);
    expect(second.entries[0].id).toBeLessThan(first.entries[0].id);
    expectErrorResponse(await adminCall(server, "GET", "/admin/v1/audit?limit=0"), 400, "invalid_request");
    expectErrorResponse(await adminCall(server, "GET", "/admin/v1/audit?before=x"), 400, "invalid_request");
    expectErrorResponse(await adminCall(server, "GET", "/admin/v1/audit", { token: null }), 404, "not_found");
  });

  it("writes no token or key to the logs", () => {
    const lines = server.logLines.join("\n");
    for (const secret of secrets) expect(lines).not.toContain(secret);
  });
});
