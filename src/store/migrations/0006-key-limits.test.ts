import { afterEach, describe, expect, it } from "vitest";
import { STORE_ENGINES } from "../../testing/databases.js";
import { displayPrefix, generateApiKey, hashApiKey } from "../api-key.js";
import { migrate, MIGRATIONS } from "../migrate.js";
import { testDatabases } from "../test-helpers.js";

/**
 * A database written before keys had limits of their own is upgraded in place: its keys keep
 * working with no limits (no rate limit of their own, no budget, no expiry, nothing spent),
 * and a hold taken before the upgrade still settles.
 */

const KEY_LIMITS = MIGRATIONS.findIndex((migration) => migration.name === "key_limits");

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const databases = testDatabases(engine);
  afterEach(() => databases.dropAll());

  it("existing keys come through unlimited and keep working; a hold from before settles", async () => {
    const test = databases.fresh();
    const raw = await test.raw();
    await migrate(raw, { migrations: MIGRATIONS.slice(0, KEY_LIMITS) });
    const key = generateApiKey();
    const at = Date.now() - 1_000;
    await raw.db
      .insertInto("accounts")
      .values({ id: "acct_old", name: "old", created_at: at, plan_id: "plan_default", balance_micro: 0, reserved_micro: 0 })
      .execute();
    await raw.db
      .insertInto("ledger")
      .values({ account_id: "acct_old", at, kind: "top_up", amount_micro: 1_000, period_start: null, request_id: null, note: "before" })
      .execute();
    await raw.db.updateTable("accounts").set({ balance_micro: 1_000, reserved_micro: 100 }).execute();
    await raw.db
      .insertInto("api_keys")
      .values({
        id: "key_old",
        account_id: "acct_old",
        name: "old key",
        prefix: displayPrefix(key),
        hash: hashApiKey(key),
        created_at: at,
        last_used_at: null,
        revoked_at: null,
      })
      .execute();
    const hold = {
      id: "res_old",
      account_id: "acct_old",
      billed_to: "balance" as const,
      questions: 1,
      input_tokens: 100,
      amount_micro: 100,
      period_start: at,
      request_id: "req_old",
      created_at: at,
      expires_at: at + 3_600_000,
    };
    // The reservations table before the upgrade has no key_id: inserted through the columns it has.
    const { key_id: _none, ...columns } = { ...hold, key_id: null };
    await raw.db
      .insertInto("reservations")
      .values(columns as typeof hold & { key_id: null })
      .execute();
    await raw.close();

    const store = await test.store();
    const [record] = await store.keys.list();
    expect(record, JSON.stringify(record)).toMatchObject({
      id: "key_old",
      name: "old key",
      limits: { requestsPerMinute: null, budgetMicro: null, expiresAt: null },
      spentMicro: 0,
      heldMicro: 0,
    });
    const caller = await store.keys.authenticate(key);
    expect(caller, JSON.stringify(caller)).toMatchObject({ keyId: "key_old", accountId: "acct_old", keyRequestsPerMinute: null });
    expect(caller?.expiredAt, JSON.stringify(caller)).toBeUndefined();

    const settled = await store.billing.settle({
      id: "res_old",
      accountId: "acct_old",
      billedTo: "balance",
      questions: 1,
      inputTokens: 100,
      amountMicro: 100,
      periodStart: at,
      requestId: "req_old",
      expiresAt: at + 3_600_000,
      keyId: null,
    });
    expect(settled?.standing, JSON.stringify(settled)).toMatchObject({ balanceMicro: 900, heldMicro: 0 });
    expect(await store.ledger.check(), "the ledger still adds up").toMatchObject({ ok: true });

    // The upgraded key takes limits like a new one.
    const limited = await store.keys.update("key_old", { budgetMicro: 5_000, requestsPerMinute: 3 });
    expect(limited?.limits, JSON.stringify(limited)).toEqual({ requestsPerMinute: 3, budgetMicro: 5_000, expiresAt: null });
  });
});
