import { afterEach, describe, expect, it } from "vitest";
import { billingStores } from "../testing/billing-store.js";
import { STORE_ENGINES } from "../testing/databases.js";
import { tamper } from "./test-helpers.js";

/** The ledger check covers keys: what a key holds matches its open holds, and keys never spent more than the account was charged. */

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const stores = billingStores(engine);
  afterEach(() => stores.closeAll());

  it("agrees while holds are open and after they settle, and names a key whose columns were altered", async () => {
    const t = await stores.open({ balanceMicro: 1_000 });
    const { record } = await t.store.keys.create({ accountId: t.accountId, budgetMicro: 500 });
    const payer = { ...(await t.payer()), keyId: record.id };
    const held = await t.billing.reserve(payer, { questions: 1, inputTokens: 200, requestId: "req_1" });
    expect(await t.store.ledger.check(), "a hold open").toMatchObject({ ok: true });
    await t.billing.settle(held);
    expect(await t.store.ledger.check(), "settled").toMatchObject({ ok: true });

    await tamper(t.database, `UPDATE api_keys SET held_micro = 7 WHERE id = '${record.id}'`);
    await tamper(t.database, `UPDATE api_keys SET spent_micro = 900 WHERE id = '${record.id}'`);
    const check = await t.store.ledger.check();
    expect(check.mismatches, JSON.stringify(check)).toEqual([
      { accountId: t.accountId, what: `key ${record.id} held`, unit: "micro_eur", column: 7, ledgerSum: 0 },
      { accountId: t.accountId, what: "keys' spend above the account's charges", unit: "micro_eur", column: 900, ledgerSum: 200 },
    ]);
  });
});
