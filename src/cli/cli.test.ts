import BetterSqlite3 from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { hashApiKey } from "../store/api-key.js";
import { expectOneLineUserError, useCliHarness } from "./test-helpers.js";

const { database, judge, judgeOk, judgeJson } = useCliHarness();

describe("judge CLI", () => {
  it("creates an account and a key, lists keys without the key, and revokes it by prefix", async () => {
    const account = await judgeJson<{ id: string; name: string }>("accounts", "create", "--name", "Acme");
    expect(account, JSON.stringify(account)).toMatchObject({
      id: expect.stringMatching(/^acct_/),
      name: "Acme",
    });

    const created = await judgeOk("keys", "create", "--account", account.id, "--name", "ci");
    const key = created.match(/tjs_[0-9A-Za-z]{40}/)?.[0];
    expect(key, created).toBeDefined();
    expect(created, created).toContain("shown once, store it now");
    const prefix = key!.slice(0, 12);

    const listed = await judgeOk("keys", "list");
    expect(listed, listed).toContain(prefix);
    expect(listed, listed).toContain("active");
    expect(listed, `plaintext key in list output:\n${listed}`).not.toContain(key!.slice(4));
    const listedJson = await judgeOk("keys", "list", "--json");
    expect(listedJson, `plaintext key in list --json:\n${listedJson}`).not.toContain(key!.slice(4));

    const store = await database().store();
    try {
      expect((await store.keys.authenticate(key!))?.accountId).toBe(account.id);
      const revokedOutput = await judgeOk("keys", "revoke", prefix);
      expect(revokedOutput, revokedOutput).toMatch(/^Revoked API key key_/);
      expect(await store.keys.authenticate(key!), "revoked key still authenticates").toBeUndefined();
    } finally {
      await store.close();
    }
    const afterRevoke = await judgeOk("keys", "list", "--account", account.id);
    expect(afterRevoke, afterRevoke).toContain("revoked");
  });

  it("prints JSON that parses for every management command", async () => {
    const account = await judgeJson<{ id: string }>("accounts", "create", "--name", "Acme");
    const accounts = await judgeJson<unknown[]>("accounts", "list");
    expect(accounts, JSON.stringify(accounts)).toEqual([account]);

    const created = await judgeJson<{ key: string; record: { id: string; prefix: string } }>("keys", "create", "--account", account.id);
    expect(created.key, JSON.stringify(created)).toMatch(/^tjs_[0-9A-Za-z]{40}$/);
    expect(created.record.prefix, JSON.stringify(created)).toBe(created.key.slice(0, 12));

    const keys = await judgeJson<{ id: string }[]>("keys", "list", "--account", account.id);
    expect(
      keys.map((k) => k.id),
      JSON.stringify(keys),
    ).toEqual([created.record.id]);

    type Revoked = { id: string; revokedAt: number | null };
    const revoked = await judgeJson<Revoked>("keys", "revoke", created.record.id);
    expect(revoked, JSON.stringify(revoked)).toMatchObject({
      id: created.record.id,
      revokedAt: expect.any(Number),
    });
  });

  it("reports an unknown account as one line on stderr with exit code 1", async () => {
    expectOneLineUserError(await judge("keys", "create", "--account", "acct_missing"), /^judge: No account with id acct_missing$/m);
  });

  it("refuses an ambiguous prefix with exit code 1 and revokes nothing", async () => {
    const account = await judgeJson<{ id: string }>("accounts", "create", "--name", "Acme");
    const created = await judgeJson<{ record: { prefix: string } }>("keys", "create", "--account", account.id);
    const raw = new BetterSqlite3(database().location);
    raw
      .prepare("INSERT INTO api_keys (id, account_id, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?)")
      .run("key_twin", account.id, created.record.prefix, hashApiKey("twin"), 1);
    raw.close();

    expectOneLineUserError(await judge("keys", "revoke", created.record.prefix), /matches 2 keys/);
    const keys = await judgeJson<{ revokedAt: number | null }[]>("keys", "list");
    expect(
      keys.map((k) => k.revokedAt),
      JSON.stringify(keys),
    ).toEqual([null, null]);
  });

  it("reports a revoke that matches no key as one line with exit code 1", async () => {
    expectOneLineUserError(await judge("keys", "revoke", "tjs_nothing1"), /No API key matches "tjs_nothing1"/);
  });
});
