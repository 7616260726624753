import { afterEach, describe, expect, it } from "vitest";
import { periodContaining } from "../money/periods.js";
import { billingStores } from "../testing/billing-store.js";
import { STORE_ENGINES } from "../testing/databases.js";
import { tamper } from "./test-helpers.js";

/**
 * Integers cross from the database into JavaScript exactly (BigInt from both drivers, checked by
 * SafeIntegersPlugin): money never arrives as a string that concatenates nor as a float that
 * rounded silently.
 */

const MAX = Number.MAX_SAFE_INTEGER;
/** 2^53 + 1: the first integer past MAX that a double cannot hold (it would round to 2^53). */
const BEYOND = "9007199254740993";

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const stores = billingStores(engine);
  afterEach(() => stores.closeAll());

  it("read back as exact numbers up to Number.MAX_SAFE_INTEGER, sums included", async () => {
    const t = await stores.open();
    await t.store.ledger.topUp(t.accountId, MAX - 7);
    const { balanceMicro } = await t.store.ledger.topUp(t.accountId, 7);
    const account = (await t.store.accounts.get(t.accountId))!;
    const usage = (await t.store.ledger.usage(t.accountId, periodContaining(account.createdAt, t.clock.now())))!;
    const standing = (await t.billing.standing(await t.payer()))!;
    const entries = await t.store.ledger.entries(t.accountId);
    const read = { balanceMicro, account: account.balanceMicro, usage: usage.balanceMicro, standing: standing.balanceMicro };
    const message = JSON.stringify({ ...read, entries });
    expect(read, message).toEqual({ balanceMicro: MAX, account: MAX, usage: MAX, standing: MAX });
    expect(
      Object.values(read).map((value) => typeof value),
      message,
    ).toEqual(["number", "number", "number", "number"]);
    expect(
      entries.map((e) => e.amountMicro),
      message,
    ).toEqual([7, MAX - 7]);
    expect(
      entries.every((e) => typeof e.amountMicro === "number" && typeof e.id === "number" && typeof e.at === "number"),
      message,
    ).toBe(true);
    // The ledger's SUM (NUMERIC on PostgreSQL) is exact too: it equals the balance to the micro-euro.
    const check = await t.store.ledger.check();
    expect(check, JSON.stringify(check)).toEqual({ ok: true, accounts: 1, mismatches: [] });
  });

  it(`a value beyond the safe range (${BEYOND}) makes reads throw a RangeError, never a rounded float or a string`, async () => {
    const t = await stores.open({ balanceMicro: 1_000 });
    const payer = await t.payer();
    // balance_micro's CHECKs (>= 0, >= reserved_micro) let this through on both engines.
    await tamper(t.database, `UPDATE accounts SET balance_micro = ${BEYOND}`);
    const period = periodContaining(payer.terms.createdAt, t.clock.now());
    const reads: [string, () => Promise<unknown>][] = [
      ["accounts.get", () => t.store.accounts.get(t.accountId)],
      ["accounts.list", () => t.store.accounts.list()],
      ["ledger.usage", () => t.store.ledger.usage(t.accountId, period)],
      ["billing.standing", () => t.billing.standing(payer)],
      ["ledger.check", () => t.store.ledger.check()],
    ];
    for (const [name, read] of reads) {
      let outcome: unknown;
      try {
        outcome = { returned: await read() };
      } catch (error) {
        outcome = error;
      }
      expect(outcome, `${name}: ${JSON.stringify(outcome)}`).toBeInstanceOf(RangeError);
      expect((outcome as Error).message, name).toContain(BEYOND);
    }
  });
});
