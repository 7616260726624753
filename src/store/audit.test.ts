import { afterEach, describe, expect, it } from "vitest";
import { STORE_ENGINES } from "../testing/databases.js";
import { hashApiKey } from "./api-key.js";
import { migrate, MIGRATIONS } from "./migrate.js";
import { migration as auditMigration } from "./migrations/0005-accounts-disabled-admin-tokens-audit-log.js";
import { isStoreError } from "../record-errors.js";
import { fakeClock, tamper, testDatabases } from "./test-helpers.js";
import type { AdminActor, Store } from "./types.js";

/** Disabling accounts, named admin tokens and the audit log, in the store, on SQLite and PostgreSQL. */

const alice: AdminActor = { kind: "admin-token", tokenId: "adm_alice", name: "alice" };
const cli: AdminActor = { kind: "cli", user: "ops" };
const show = (value: unknown) => JSON.stringify(value, null, 2);

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const databases = testDatabases(engine);
  afterEach(() => databases.dropAll());
  const clock = fakeClock();
  const open = () => databases.store({ now: clock.now });
  const log = async (store: Store, accountId?: string) => (await store.audit.page({ accountId, limit: 100 })).entries;

  it("records every admin change with who, what, which object, when and what changed, newest first", async () => {
    const { store } = await open();
    const plan = await store.plans.create({ name: "pro", requestsPerMinute: 10, allowanceQuestions: 5, pricePerMillion: 1 }, cli);
    await store.plans.update("pro", { allowanceQuestions: 7 }, alice);
    const account = await store.accounts.create({ name: "Acme", plan: "pro" }, alice);
    await store.accounts.rename(account.id, "Acme Ltd", alice);
    await store.accounts.setPlan(account.id, "default", { kind: "env-token" });
    const { key, record } = await store.keys.create({ accountId: account.id, name: "ci" }, alice);
    await store.keys.revoke(record.id, alice);
    await store.ledger.topUp(account.id, 2_000_000, "invoice 7", alice);
    await store.ledger.adjust(account.id, -500_000, "mistake", alice);
    await store.accounts.setDisabled(account.id, true, alice);
    await store.accounts.setDisabled(account.id, false, alice);
    const entries = await log(store);
    expect(
      entries.map((e) => [e.actor, e.action, e.objectKind, e.objectId]),
      show(entries),
    ).toEqual([
      ["token:alice", "account.enable", "account", account.id],
      ["token:alice", "account.disable", "account", account.id],
      ["token:alice", "balance.adjust", "account", account.id],
      ["token:alice", "balance.top_up", "account", account.id],
      ["token:alice", "key.revoke", "key", record.id],
      ["token:alice", "key.create", "key", record.id],
      ["env-token", "account.set_plan", "account", account.id],
      ["token:alice", "account.rename", "account", account.id],
      ["token:alice", "account.create", "account", account.id],
      ["token:alice", "plan.update", "plan", plan.id],
      ["cli:ops", "plan.create", "plan", plan.id],
    ]);
    const byAction = Object.fromEntries(entries.map((e) => [e.action, e]));
    expect(byAction["account.rename"].details).toEqual({ from: "Acme", to: "Acme Ltd" });
    expect(byAction["account.set_plan"].details).toEqual({ from: plan.id, to: "plan_default" });
    expect(byAction["plan.update"].details).toEqual({ allowance_questions: { from: 5, to: 7 } });
    expect(byAction["balance.adjust"].details).toMatchObject({ amount_micro: -500_000, balance_micro: 1_500_000, note: "mistake" });
    expect(byAction["key.create"]).toMatchObject({ actorTokenId: "adm_alice", accountId: account.id, details: { name: "ci", prefix: record.prefix } });
    expect(byAction["account.create"].at).toBe(clock.now());
    expect(show(entries), "never the key itself").not.toContain(key);
    expect(show(entries)).not.toContain(hashApiKey(key));
  });

  it("records nothing for a change that fails or changes nothing: the entry is in the change's transaction", async () => {
    const { store } = await open();
    const account = await store.accounts.create({ name: "A" });
    const failures = [
      () => store.ledger.topUp("acct_missing", 1, undefined, alice),
      () => store.ledger.adjust(account.id, -1, "below zero", alice),
      () => store.plans.create({ name: "default", requestsPerMinute: 1, allowanceQuestions: 0, pricePerMillion: 0 }, alice),
      () => store.accounts.rename("acct_missing", "x", alice),
      () => store.accounts.setDisabled("acct_missing", true, alice),
      () => store.keys.create({ accountId: "acct_missing" }, alice),
    ];
    for (const failure of failures) await expect(failure()).rejects.toSatisfy(isStoreError);
    await store.accounts.rename(account.id, "A", alice);
    await store.accounts.setPlan(account.id, "default", alice);
    await store.accounts.setDisabled(account.id, false, alice);
    expect(await log(store)).toEqual([]);
  });

  it("a disabled account's keys are refused with account_disabled at once; enabling restores them; nothing is deleted", async () => {
    const { store } = await open();
    const account = await store.accounts.create({ name: "A" });
    await store.ledger.topUp(account.id, 1_000);
    const { key } = await store.keys.create({ accountId: account.id });
    expect((await store.keys.authenticate(key))?.accountId).toBe(account.id);
    const disabled = await store.accounts.setDisabled(account.id, true, cli);
    expect(disabled.disabledAt).toBe(clock.now());
    await expect(store.keys.authenticate(key)).rejects.toSatisfy((e) => isStoreError(e, "account_disabled"));
    clock.advance(1_000);
    // Twice keeps the first time.
    expect((await store.accounts.setDisabled(account.id, true, cli)).disabledAt).toBe(disabled.disabledAt);
    expect((await store.accounts.get(account.id))?.balanceMicro).toBe(1_000);
    expect(await store.keys.list({ accountId: account.id })).toHaveLength(1);
    expect((await store.accounts.page({ limit: 10, offset: 0 })).accounts[0].account.disabledAt).toBe(disabled.disabledAt);
    expect((await store.accounts.setDisabled(account.id, false, cli)).disabledAt).toBeNull();
    expect((await store.keys.authenticate(key))?.accountId).toBe(account.id);
    expect((await log(store, account.id)).map((e) => e.action)).toEqual(["account.enable", "account.disable"]);
  });

  it("pages the log newest first by `before`, and by account (its keys' and balance's actions included)", async () => {
    const { store } = await open();
    const a = await store.accounts.create({ name: "A" }, cli);
    const b = await store.accounts.create({ name: "B" }, cli);
    await store.keys.create({ accountId: a.id }, cli);
    await store.ledger.topUp(b.id, 5, undefined, cli);
    const first = await store.audit.page({ limit: 2 });
    expect(
      first.entries.map((e) => e.action),
      show(first),
    ).toEqual(["balance.top_up", "key.create"]);
    const second = await store.audit.page({ limit: 2, before: first.nextBefore! });
    expect(
      second.entries.map((e) => e.objectId),
      show(second),
    ).toEqual([b.id, a.id]);
    expect(second.nextBefore).toBeNull();
    expect((await log(store, a.id)).map((e) => e.action)).toEqual(["key.create", "account.create"]);
  });

  it("keeps the audit log append-only: the database refuses UPDATE and DELETE", async () => {
    const { store, database } = await open();
    await store.accounts.create({ name: "A" }, cli);
    await expect(tamper(database, "UPDATE audit_log SET actor = 'someone else'")).rejects.toThrow(/append-only/);
    await expect(tamper(database, "DELETE FROM audit_log")).rejects.toThrow(/append-only/);
    expect(await log(store)).toHaveLength(1);
  });

  it("admin tokens: shown once, stored as a hash, authenticated until revoked, names unique among active ones", async () => {
    const { store, database } = await open();
    const { token, record } = await store.adminTokens.create({ name: "alice" }, cli);
    expect(token).toMatch(/^tja_[0-9A-Za-z]{40}$/);
    expect(token.startsWith(record.prefix)).toBe(true);
    expect(JSON.stringify(await database.dump()), "the token is never stored").not.toContain(token);
    expect((await store.adminTokens.authenticate(token))?.id).toBe(record.id);
    // One character changed (a token ending in "x" by chance would otherwise be left as it was).
    expect(await store.adminTokens.authenticate(`${token.slice(0, -1)}${token.endsWith("x") ? "y" : "x"}`)).toBeUndefined();
    await expect(store.adminTokens.create({ name: "alice" })).rejects.toSatisfy((e) => isStoreError(e, "invalid_input"));
    expect((await store.adminTokens.revoke("alice", cli))?.revokedAt).toBe(clock.now());
    expect(await store.adminTokens.authenticate(token)).toBeUndefined();
    expect(await store.adminTokens.revoke("alice", cli), "a revoked token's name names nothing").toBeUndefined();
    await store.adminTokens.revoke(record.id, cli);
    clock.advance(1);
    const again = await store.adminTokens.create({ name: "alice" }, cli);
    expect((await store.adminTokens.list()).map((r) => [r.name, r.revokedAt === null])).toEqual([
      ["alice", false],
      ["alice", true],
    ]);
    const entries = await log(store);
    expect(
      entries.map((e) => [e.action, e.objectId]),
      show(entries),
    ).toEqual([
      ["admin_token.create", again.record.id],
      ["admin_token.revoke", record.id],
      ["admin_token.create", record.id],
    ]);
    expect(show(entries)).not.toContain(token);
  });

  it("migrates a database of the previous schema: accounts enabled, keys working, an empty log", async () => {
    const test = databases.fresh();
    const raw = await test.raw();
    const previous = MIGRATIONS.findIndex((m) => m.name === auditMigration.name);
    await migrate(raw, { migrations: MIGRATIONS.slice(0, previous) });
    await raw.db
      .insertInto("accounts")
      .values({ id: "acct_old", name: "Old", created_at: 1, plan_id: "plan_default" } as never)
      .execute();
    const current = await test.store({ now: clock.now });
    expect((await current.accounts.get("acct_old"))?.disabledAt).toBeNull();
    const { key } = await current.keys.create({ accountId: "acct_old" });
    expect((await current.keys.authenticate(key))?.accountId).toBe("acct_old");
    expect(await log(current)).toEqual([]);
    expect(await current.adminTokens.list()).toEqual([]);
  });
});
