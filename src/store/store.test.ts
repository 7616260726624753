import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { STORE_ENGINES, type TestDatabase } from "../testing/databases.js";
import { hashApiKey } from "./api-key.js";
import { LAST_USED_RESOLUTION_MS } from "./keys.js";
import { StoreError } from "../record-errors.js";
import { createStore, type Store } from "./store.js";
import { fakeClock, testDatabases } from "./test-helpers.js";

/** The default plan every account gets unless told otherwise (created by migration 2). */
const DEFAULT_TERMS = { requestsPerMinute: 60, allowanceQuestions: 1000, pricePerMillion: 50_000 };

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const databases = testDatabases(engine);
  afterEach(() => databases.dropAll());

  const open = async (options: { now?: () => number } = {}) => (await databases.store(options)).store;

  async function storeWithKey(name?: string) {
    const { store, database } = await databases.store();
    const account = await store.accounts.create({ name: "Acme" });
    const created = await store.keys.create({ accountId: account.id, name });
    return { store, database, account, ...created };
  }

  /** Runs raw SQL-builder work on a second connection, as an operator (or an attacker) would. */
  async function onRaw<T>(database: TestDatabase, work: (raw: Awaited<ReturnType<TestDatabase["raw"]>>) => Promise<T>): Promise<T> {
    const raw = await database.raw();
    try {
      return await work(raw);
    } finally {
      await raw.close();
    }
  }

  describe("accounts", () => {
    it("creates accounts with acct_ ids and lists them in creation order", async () => {
      const clock = fakeClock();
      const store = await open({ now: clock.now });
      const first = await store.accounts.create({ name: "  Acme  " });
      clock.advance(1);
      const second = await store.accounts.create({ name: "Globex" });
      expect(first, JSON.stringify(first)).toMatchObject({ name: "Acme", createdAt: clock.now() - 1 });
      expect(first.id, first.id).toMatch(/^acct_[0-9A-Za-z]{16}$/);
      expect(await store.accounts.list()).toEqual([first, second]);
      expect(await store.accounts.get(second.id)).toEqual(second);
      expect(await store.accounts.get("acct_missing")).toBeUndefined();
    });

    it("rejects blank account names with an invalid_input StoreError", async () => {
      const store = await open();
      await expect(store.accounts.create({ name: "   " })).rejects.toThrow(expect.objectContaining({ name: "StoreError", code: "invalid_input" }));
    });
  });

  describe("creating keys", () => {
    it("returns a tjs_ key with 40 base62 characters and a record showing its first 12", async () => {
      const { key, record, account } = await storeWithKey("ci");
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

    it("stores the key only as its SHA-256 hash: the plaintext is in no column, no table and no file", async () => {
      const { store, database, key, record } = await storeWithKey();
      const randomPart = key.slice(4);
      await store.close();

      const rows = await onRaw(database, (raw) => raw.db.selectFrom("api_keys").selectAll().execute());
      expect(rows, JSON.stringify(rows)).toHaveLength(1);
      expect(rows[0]!.hash, JSON.stringify(rows[0])).toBe(hashApiKey(key));
      expect(rows[0]!.prefix).toBe(record.prefix);
      const leaked = Object.entries(rows[0]!).filter(([, value]) => String(value).includes(randomPart));
      expect(leaked, `columns containing the key: ${JSON.stringify(leaked)}`).toEqual([]);
      const dump = JSON.stringify(await database.dump());
      expect(dump.includes(randomPart), `a table contains the plaintext key: ${dump}`).toBe(false);

      // PostgreSQL's files belong to its server; a SQLite database is files we can read.
      if (engine === "sqlite") {
        const path = database.location;
        for (const file of [path, `${path}-wal`, `${path}-shm`].filter((f) => existsSync(f))) {
          expect(readFileSync(file).includes(randomPart), `${file} contains the plaintext key`).toBe(false);
        }
      }
    });

    it("refuses to create a key for an unknown account with an account_not_found StoreError", async () => {
      const store = await open();
      let thrown: unknown;
      try {
        await store.keys.create({ accountId: "acct_doesnotexist" });
      } catch (error) {
        thrown = error;
      }
      expect(thrown, String(thrown)).toBeInstanceOf(StoreError);
      expect(thrown).toMatchObject({ code: "account_not_found" });
      expect((thrown as Error).message).toContain("acct_doesnotexist");
      expect(await store.keys.count({ includeRevoked: true })).toBe(0);
    });

    it("lists keys for one account or all accounts, without any secret material", async () => {
      const store = await open();
      const acme = await store.accounts.create({ name: "Acme" });
      const globex = await store.accounts.create({ name: "Globex" });
      const a = await store.keys.create({ accountId: acme.id });
      const g = await store.keys.create({ accountId: globex.id, name: "prod" });
      expect(await store.keys.list({ accountId: acme.id })).toEqual([a.record]);
      const all = await store.keys.list();
      expect(all.map((r) => r.id).sort()).toEqual([a.record.id, g.record.id].sort());
      expect(JSON.stringify(all)).not.toContain(a.key.slice(4));
      expect(JSON.stringify(all)).not.toContain(g.key.slice(4));
    });
  });

  describe("authenticating and revoking", () => {
    it("authenticates a key, with its account's terms, until it is revoked, and rejects it on the very next call", async () => {
      const { store, key, record, account } = await storeWithKey();
      const authenticated = await store.keys.authenticate(key);
      expect(authenticated, JSON.stringify(authenticated)).toEqual({
        keyId: record.id,
        accountId: account.id,
        terms: { createdAt: account.createdAt, planId: account.planId, ...DEFAULT_TERMS },
        keyRequestsPerMinute: null,
      });

      const revoked = await store.keys.revoke(record.id);
      expect(revoked?.revokedAt, JSON.stringify(revoked)).toEqual(expect.any(Number));
      expect(await store.keys.authenticate(key)).toBeUndefined();
    });

    it("revokes by the displayed prefix", async () => {
      const { store, key, record } = await storeWithKey();
      const revoked = await store.keys.revoke(record.prefix);
      expect(revoked?.id, JSON.stringify(revoked)).toBe(record.id);
      expect(await store.keys.authenticate(key)).toBeUndefined();
      expect(await store.keys.count()).toBe(0);
      expect(await store.keys.count({ includeRevoked: true })).toBe(1);
    });

    it("keeps the first revocation time when a key is revoked twice", async () => {
      const clock = fakeClock();
      const store = await open({ now: clock.now });
      const account = await store.accounts.create({ name: "Acme" });
      const { record } = await store.keys.create({ accountId: account.id });
      const first = await store.keys.revoke(record.id);
      clock.advance(5_000);
      const second = await store.keys.revoke(record.id);
      expect(second, JSON.stringify({ first, second })).toEqual(first);
    });

    it("returns undefined when revoking something that matches no key", async () => {
      const store = await open();
      expect(await store.keys.revoke("tjs_00000000")).toBeUndefined();
      expect(await store.keys.revoke("key_nothing")).toBeUndefined();
      expect(await store.keys.revoke("")).toBeUndefined();
    });

    it("refuses to pick one of several keys sharing a prefix", async () => {
      const { store, database, record, account } = await storeWithKey();
      await onRaw(database, (raw) =>
        raw.db
          .insertInto("api_keys")
          .values({
            id: "key_twin",
            account_id: account.id,
            name: null,
            prefix: record.prefix,
            hash: hashApiKey("other"),
            created_at: 1,
            last_used_at: null,
            revoked_at: null,
          })
          .execute(),
      );

      await expect(store.keys.revoke(record.prefix)).rejects.toThrow(expect.objectContaining({ code: "ambiguous_prefix" }));
      expect((await store.keys.list()).map((r) => r.revokedAt)).toEqual([null, null]);
      expect((await store.keys.revoke("key_twin"))?.revokedAt).toEqual(expect.any(Number));
    });

    it("rejects unknown and malformed keys", async () => {
      const { store, key } = await storeWithKey();
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
        expect(await store.keys.authenticate(candidate as string), `accepted ${String(candidate)}`).toBeUndefined();
      }
    });

    it("records last use, refreshing it at most once per resolution window", async () => {
      const clock = fakeClock();
      const store = await open({ now: clock.now });
      const account = await store.accounts.create({ name: "Acme" });
      const { key } = await store.keys.create({ accountId: account.id });
      const lastUsed = async () => (await store.keys.list())[0]!.lastUsedAt;

      await store.keys.authenticate(key);
      const firstUse = clock.now();
      expect(await lastUsed()).toBe(firstUse);
      clock.advance(LAST_USED_RESOLUTION_MS - 1);
      await store.keys.authenticate(key);
      expect(await lastUsed(), "refreshed inside the window").toBe(firstUse);
      clock.advance(1);
      await store.keys.authenticate(key);
      expect(await lastUsed()).toBe(clock.now());
    });
  });

  describe("persistence", () => {
    it("keeps accounts and keys when an existing database is reopened", async () => {
      const { store, database, account, key, record } = await storeWithKey("ci");
      await store.close();

      const reopened = await database.store();
      expect(await reopened.accounts.list()).toEqual([account]);
      expect(await reopened.keys.list()).toEqual([record]);
      expect(await reopened.keys.authenticate(key)).toMatchObject({ keyId: record.id, accountId: account.id });
    });
  });
});

describe("SQLite in memory", () => {
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it("works as a throwaway in-memory store", async () => {
    store = await createStore({ location: ":memory:" });
    const account = await store.accounts.create({ name: "Acme" });
    const { key } = await store.keys.create({ accountId: account.id });
    expect((await store.keys.authenticate(key))?.accountId).toBe(account.id);
    expect(await store.keys.count()).toBe(1);
  });
});
