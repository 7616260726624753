import { userInfo } from "node:os";
import { describe, expect, it } from "vitest";
import { expectOneLineUserError, useCliHarness } from "./test-helpers.js";

const { database, judge, judgeOk, judgeJson } = useCliHarness();
const me = `cli:${userInfo().username}`;

async function withStore<T>(run: (store: Awaited<ReturnType<ReturnType<typeof database>["store"]>>) => Promise<T>): Promise<T> {
  const store = await database().store();
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

describe("judge accounts rename / disable / enable", () => {
  it("renames, disables and enables an account; lists show the status; a disabled account's key is refused", async () => {
    const { id } = await judgeJson<{ id: string }>("accounts", "create", "--name", "Acme");
    const { key } = await judgeJson<{ key: string }>("keys", "create", "--account", id);
    expect(await judgeOk("accounts", "rename", id, "--name", "Acme Ltd")).toContain(`Account ${id} is now named Acme Ltd.`);
    expect(await judgeOk("accounts", "disable", id)).toContain("is disabled");
    const listed = await judgeOk("accounts", "list");
    expect(listed).toMatch(/STATUS/);
    expect(listed).toMatch(new RegExp(`${id}\\s+Acme Ltd\\s+disabled`));
    expect(await judgeOk("accounts", "show", id)).toMatch(/Status\s+disabled since/);
    const json = await judgeJson<any[]>("accounts", "list");
    expect(json[0], JSON.stringify(json)).toMatchObject({ id, name: "Acme Ltd", disabled: true });
    await withStore(async (store) => {
      await expect(store.keys.authenticate(key)).rejects.toMatchObject({ code: "account_disabled" });
    });
    expect(await judgeJson("accounts", "enable", id)).toMatchObject({ disabled: false, disabled_at: null });
    await withStore(async (store) => expect((await store.keys.authenticate(key))?.accountId).toBe(id));
    expectOneLineUserError(await judge("accounts", "disable", "acct_nope"), /No account with id acct_nope/);
    expectOneLineUserError(await judge("accounts", "rename", id, "--name", " "), /must be a non-empty string/);
  });
});

describe("judge admins", () => {
  it("creates a token printed once, lists it by prefix only, and revokes it by name", async () => {
    const created = await judgeJson<{ id: string; name: string; token: string; prefix: string }>("admins", "create", "--name", "alice");
    expect(created.token).toMatch(/^tja_[0-9A-Za-z]{40}$/);
    const text = await judgeOk("admins", "create", "--name", "bob");
    expect(text).toMatch(/shown only this once/);
    const list = await judgeOk("admins", "list");
    expect(list).toContain(created.prefix);
    expect(list).not.toContain(created.token);
    expect(list).toMatch(/alice.*active/);
    expect(await judgeOk("admins", "revoke", "alice")).toContain(`Revoked admin token ${created.id} (alice).`);
    const listed = await judgeJson<any[]>("admins", "list");
    expect(listed.find((t) => t.id === created.id).revoked_at).not.toBeNull();
    expectOneLineUserError(await judge("admins", "revoke", "alice"), /No admin token with id or active name alice/);
    expectOneLineUserError(await judge("admins", "create", "--name", "bob"), /already named bob/);
    await withStore(async (store) => expect(await store.adminTokens.authenticate(created.token)).toBeUndefined());
  });
});

describe("judge audit list", () => {
  it("lists every CLI change as cli:<OS user>, newest first, by account and limited", async () => {
    await judgeOk("plans", "create", "--name", "pro", "--rpm", "10", "--allowance", "0", "--price", "0.05");
    await judgeOk("plans", "update", "pro", "--rpm", "20");
    const { id } = await judgeJson<{ id: string }>("accounts", "create", "--name", "Acme", "--plan", "pro");
    await judgeOk("accounts", "set-plan", id, "default");
    await judgeOk("balance", "top-up", "--account", id, "--amount", "2.00", "--note", "inv");
    await judgeOk("balance", "adjust", "--account", id, "--amount", "-0.50", "--note", "oops");
    const key = await judgeJson<{ key: string; record: { id: string } }>("keys", "create", "--account", id, "--name", "ci");
    await judgeOk("keys", "revoke", key.record.id);
    await judgeOk("admins", "create", "--name", "alice");

    const all = await judgeJson<any[]>("audit", "list");
    expect(all.map((e) => e.action), JSON.stringify(all)).toEqual([
      "admin_token.create",
      "key.revoke",
      "key.create",
      "balance.adjust",
      "balance.top_up",
      "account.set_plan",
      "account.create",
      "plan.update",
      "plan.create",
    ]);
    expect(new Set(all.map((e) => e.actor))).toEqual(new Set([me]));
    expect(JSON.stringify(all)).not.toContain(key.key);
    expect(all.find((e) => e.action === "plan.update").details).toEqual({ requests_per_minute: { from: 10, to: 20 } });

    const mine = await judgeJson<any[]>("audit", "list", "--account", id, "--limit", "2");
    expect(mine.map((e) => e.action)).toEqual(["key.revoke", "key.create"]);
    const text = await judgeOk("audit", "list", "--limit", "3");
    expect(text).toMatch(/ACTOR\s+ACTION/);
    expect(text).toContain(`${me}`);
    expect(text).toMatch(/requests_per_minute|admin_token\.create/);
    expectOneLineUserError(await judge("audit", "list", "--limit", "0"), /--limit must be a whole number/);
    expectOneLineUserError(await judge("audit", "list", "--account", "acct_nope"), /No account with id acct_nope/);
  });
});
