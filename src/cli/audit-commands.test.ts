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
    expect(
      all.map((e) => e.action),
      JSON.stringify(all),
    ).toEqual([
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

  it("describes amounts as euros, instants as UTC times and cleared limits as none, by readable names; --json keeps the recorded values", async () => {
    const expires = Date.UTC(2099, 11, 31);
    await judgeOk("plans", "create", "--name", "pro", "--rpm", "1200", "--allowance", "1000", "--price", "0.05");
    await judgeOk("plans", "update", "pro", "--price", "2.5");
    const { id } = await judgeJson<{ id: string }>("accounts", "create", "--name", "Acme", "--plan", "pro");
    await judgeOk("balance", "top-up", "--account", id, "--amount", "12.345678", "--note", "paid by card");
    await judgeOk("balance", "adjust", "--account", id, "--amount", "-0.50", "--note", "oops");
    const key = await judgeJson<{ record: { id: string; prefix: string } }>(
      "keys",
      "create",
      "--account",
      id,
      "--name",
      "ci",
      "--rpm",
      "1200",
      "--budget",
      "5",
      "--expires",
      "2099-12-31",
    );
    await judgeOk("keys", "update", key.record.id, "--rpm", "none", "--budget", "none", "--expires", "never");

    const text = await judgeOk("audit", "list");
    const details = (action: string) => text.split("\n").find((line) => line.includes(`  ${action}  `)) ?? text;
    expect(details("plan.create")).toContain(`name: "pro", requests per minute: 1,200, allowance questions: 1,000, price per million tokens: €0.05`);
    expect(details("plan.update")).toContain("price per million tokens: €0.05 → €2.50");
    expect(details("balance.top_up")).toMatch(/ledger entry: \d+, amount: €12\.345678, balance: €12\.345678, note: "paid by card"$/);
    expect(details("balance.adjust")).toMatch(/amount: -€0\.50, balance: €11\.845678, note: "oops"$/);
    expect(details("key.create")).toMatch(/name: "ci", prefix: "[^"]+", requests per minute: 1,200, budget: €5\.00, expires: 2099-12-31 00:00 UTC$/);
    expect(details("key.update")).toMatch(/requests per minute: none, budget: none, expires: none$/);
    // The raw figures (µ€ and epoch milliseconds) appear nowhere in the text.
    for (const raw of ["12345678", "11845678", "5000000", "2500000", "50000", String(expires), "_micro", "Micro"]) expect(text).not.toContain(raw);

    const json = await judgeJson<any[]>("audit", "list");
    const recorded = (action: string) => json.find((e) => e.action === action)?.details;
    expect(recorded("key.create")).toEqual({ name: "ci", prefix: key.record.prefix, requestsPerMinute: 1200, budgetMicro: 5_000_000, expiresAt: expires });
    expect(recorded("key.update")).toEqual({ requests_per_minute: null, budget_micro: null, expires_at: null });
    expect(recorded("balance.top_up")).toMatchObject({ amount_micro: 12_345_678, balance_micro: 12_345_678 });
    expect(recorded("plan.update")).toEqual({ price_per_million: { from: 50_000, to: 2_500_000 } });
  });
});
