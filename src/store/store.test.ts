import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { hashApiKey } from "./api-key.js";
import { LAST_USED_RESOLUTION_MS } from "./keys.js";
import { createStore, StoreError, type Store } from "./store.js";
import { fakeClock, useTempDir } from "./test-helpers.js";

const temp = useTempDir();
const openStores: Store[] = [];

function fileStore(options: { now?: () => number } = {}) {
  const path = join(temp.dir(), "nested", "judge.db");
  const store = createStore({ path, ...options });
  openStores.push(store);
  return { store, path };
}

function memoryStore(options: { now?: () => number } = {}) {
  const store = createStore({ path: ":memory:", ...options });
  openStores.push(store);
  return store;
}

afterEach(() => {
  for (const store of openStores.splice(0)) store.close();
  temp.cleanup();
});

function storeWithKey(name?: string) {
  const { store, path } = fileStore();
  const account = store.accounts.create({ name: "Acme" });
  const created = store.keys.create({ accountId: account.id, name });
  return { store, path, account, ...created };
}

describe("accounts", () => {
  it("creates accounts with acct_ ids and lists them in creation order", () => {
    const clock = fakeClock();
    const store = memoryStore({ now: clock.now });
    const first = store.accounts.create({ name: "  Acme  " });
    clock.advance(1);
    const second = store.accounts.create({ name: "Globex" });
    expect(first, JSON.stringify(first)).toMatchObject({ name: "Acme", createdAt: clock.now() - 1 });
    expect(first.id, first.id).toMatch(/^acct_[0-9A-Za-z]{16}$/);
    expect(store.accounts.list()).toEqual([first, second]);
    expect(store.accounts.get(second.id)).toEqual(second);
    expect(store.accounts.get("acct_missing")).toBeUndefined();
  });

  it("rejects blank account names with an invalid_input StoreError", () => {
    const store = memoryStore();
    expect(() => store.accounts.create({ name: "   " })).toThrow(
      expect.objectContaining({ name: "StoreError", code: "invalid_input" }),
    );
  });
});

describe("creating keys", () => {
  it("returns a tjs_ key with 40 base62 characters and a record showing its first 12", () => {
    const { key, record, account } = storeWithKey("ci");
    expect(key, key).toMatch(/^tjs_[0-9A-Za-z]{40}$/);
    expect(record, JSON.stringify(record)).toMatchObject({
      accountId: account.id,
      name: "ci",
      prefix: key.slice(0, 12),
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(record.id, record.id).toMatch(/^key_[0-9A-Za-z]{16}$/);
  });

  it("stores the key only as its SHA-256 hash: the plaintext is in no column and no file", () => {
    const { store, path, key, record } = storeWithKey();
    const randomPart = key.slice(4);
    store.close();
    openStores.length = 0;

    const raw = new BetterSqlite3(path, { readonly: true });
    const rows = raw.prepare("SELECT * FROM api_keys").all() as Record<string, unknown>[];
    raw.close();
    expect(rows, JSON.stringify(rows)).toHaveLength(1);
    expect(rows[0]!.hash, JSON.stringify(rows[0])).toBe(hashApiKey(key));
    expect(rows[0]!.prefix).toBe(record.prefix);
    const leaked = Object.entries(rows[0]!).filter(([, value]) => String(value).includes(randomPart));
    expect(leaked, `columns containing the key: ${JSON.stringify(leaked)}`).toEqual([]);

    for (const file of [path, `${path}-wal`, `${path}-shm`].filter((f) => existsSync(f))) {
      expect(readFileSync(file).includes(randomPart), `${file} contains the plaintext key`).toBe(false);
    }
  });

  it("refuses to create a key for an unknown account with an account_not_found StoreError", () => {
    const store = memoryStore();
    let thrown: unknown;
    try {
      store.keys.create({ accountId: "acct_doesnotexist" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown, String(thrown)).toBeInstanceOf(StoreError);
    expect(thrown).toMatchObject({ code: "account_not_found" });
    expect((thrown as Error).message).toContain("acct_doesnotexist");
    expect(store.keys.count({ includeRevoked: true })).toBe(0);
  });

  it("lists keys for one account or all accounts, without any secret material", () => {
    const store = memoryStore();
    const acme = store.accounts.create({ name: "Acme" });
    const globex = store.accounts.create({ name: "Globex" });
    const a = store.keys.create({ accountId: acme.id });
    const g = store.keys.create({ accountId: globex.id, name: "prod" });
    expect(store.keys.list({ accountId: acme.id })).toEqual([a.record]);
    const all = store.keys.list();
    expect(all.map((r) => r.id).sort()).toEqual([a.record.id, g.record.id].sort());
    expect(JSON.stringify(all)).not.toContain(a.key.slice(4));
    expect(JSON.stringify(all)).not.toContain(g.key.slice(4));
  });
});

describe("authenticating and revoking", () => {
  it("authenticates a key until it is revoked, and rejects it on the very next call", () => {
    const { store, key, record, account } = storeWithKey();
    expect(store.keys.authenticate(key)).toEqual({ keyId: record.id, accountId: account.id });

    const revoked = store.keys.revoke(record.id);
    expect(revoked?.revokedAt, JSON.stringify(revoked)).toEqual(expect.any(Number));
    expect(store.keys.authenticate(key)).toBeUndefined();
  });

  it("revokes by the displayed prefix", () => {
    const { store, key, record } = storeWithKey();
    const revoked = store.keys.revoke(record.prefix);
    expect(revoked?.id, JSON.stringify(revoked)).toBe(record.id);
    expect(store.keys.authenticate(key)).toBeUndefined();
    expect(store.keys.count()).toBe(0);
    expect(store.keys.count({ includeRevoked: true })).toBe(1);
  });

  it("keeps the first revocation time when a key is revoked twice", () => {
    const clock = fakeClock();
    const store = memoryStore({ now: clock.now });
    const account = store.accounts.create({ name: "Acme" });
    const { record } = store.keys.create({ accountId: account.id });
    const first = store.keys.revoke(record.id);
    clock.advance(5_000);
    const second = store.keys.revoke(record.id);
    expect(second, JSON.stringify({ first, second })).toEqual(first);
  });

  it("returns undefined when revoking something that matches no key", () => {
    const store = memoryStore();
    expect(store.keys.revoke("tjs_00000000")).toBeUndefined();
    expect(store.keys.revoke("key_nothing")).toBeUndefined();
    expect(store.keys.revoke("")).toBeUndefined();
  });

  it("refuses to pick one of several keys sharing a prefix", () => {
    const { store, path, record, account } = storeWithKey();
    const raw = new BetterSqlite3(path);
    raw.prepare(
      "INSERT INTO api_keys (id, account_id, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?)",
    ).run("key_twin", account.id, record.prefix, hashApiKey("other"), 1);
    raw.close();

    expect(() => store.keys.revoke(record.prefix)).toThrow(
      expect.objectContaining({ code: "ambiguous_prefix" }),
    );
    expect(store.keys.list().map((r) => r.revokedAt)).toEqual([null, null]);
    expect(store.keys.revoke("key_twin")?.revokedAt).toEqual(expect.any(Number));
  });

  it("rejects unknown and malformed keys", () => {
    const { store, key } = storeWithKey();
    const lastChar = key.at(-1) === "a" ? "b" : "a";
    const candidates: unknown[] = [
      "",
      "tjs_",
      key.slice(0, 12),
      key.slice(0, -1),
      key.slice(0, -1) + lastChar,
      `${key} `,
      `Bearer ${key}`,
      key.toUpperCase() === key ? key.toLowerCase() : key.toUpperCase(),
      `xyz_${key.slice(4)}`,
      "tjs_" + "!".repeat(40),
      undefined,
      42,
    ];
    for (const candidate of candidates) {
      expect(store.keys.authenticate(candidate as string), `accepted ${String(candidate)}`).toBeUndefined();
    }
  });

  it("records last use, refreshing it at most once per resolution window", () => {
    const clock = fakeClock();
    const store = memoryStore({ now: clock.now });
    const account = store.accounts.create({ name: "Acme" });
    const { key } = store.keys.create({ accountId: account.id });
    const lastUsed = () => store.keys.list()[0]!.lastUsedAt;

    store.keys.authenticate(key);
    const firstUse = clock.now();
    expect(lastUsed()).toBe(firstUse);
    clock.advance(LAST_USED_RESOLUTION_MS - 1);
    store.keys.authenticate(key);
    expect(lastUsed(), "refreshed inside the window").toBe(firstUse);
    clock.advance(1);
    store.keys.authenticate(key);
    expect(lastUsed()).toBe(clock.now());
  });
});

describe("persistence", () => {
  it("keeps accounts and keys when an existing database file is reopened", () => {
    const { store, path, account, key, record } = storeWithKey("ci");
    store.close();
    openStores.length = 0;

    const reopened = createStore({ path });
    openStores.push(reopened);
    expect(reopened.accounts.list()).toEqual([account]);
    expect(reopened.keys.list()).toEqual([record]);
    expect(reopened.keys.authenticate(key)).toEqual({ keyId: record.id, accountId: account.id });
  });

  it("works as a throwaway in-memory store", () => {
    const store = memoryStore();
    const account = store.accounts.create({ name: "Acme" });
    const { key } = store.keys.create({ accountId: account.id });
    expect(store.keys.authenticate(key)?.accountId).toBe(account.id);
    expect(store.keys.count()).toBe(1);
  });
});
