import { describe, expect, it } from "vitest";
import { expectOneLineUserError, useCliHarness } from "./test-helpers.js";
import type { AccountJson } from "../views/money.js";

/** `judge ledger export` and `judge ledger usage`: the admin API's CSV exports, from the CLI. */

const { judge, judgeOk, judgeJson } = useCliHarness();

describe("judge ledger export / usage", () => {
  it("prints an account's ledger as CSV, filtered by kind; a formula in a note is defused", async () => {
    const account = await judgeJson<AccountJson>("accounts", "create", "--name", 'acme, "the" company');
    await judgeOk("balance", "top-up", "--account", account.id, "--amount", "5", "--note", "invoice 1");
    await judgeOk("balance", "adjust", "--account", account.id, "--amount", "-1.5", "--note", "=1+1, by mistake");
    const all = (await judgeOk("ledger", "export", "--account", account.id)).split("\r\n");
    expect(all[0]).toBe("id,at,kind,amount_micro,amount_eur,questions,input_tokens,period_start,request_id,key_id,key_prefix,key_name,note");
    expect(all.slice(1, -1), all.join("\n")).toEqual([
      expect.stringMatching(/^\d+,\d{4}-[^,]+Z,adjustment,-1500000,-1\.50,0,0,,,,,,"'=1\+1, by mistake"$/),
      expect.stringMatching(/^\d+,[^,]+,top_up,5000000,5\.00,0,0,,,,,,invoice 1$/),
    ]);
    const topUps = (await judgeOk("ledger", "export", "--account", account.id, "--kind", "top_up")).trimEnd().split("\r\n");
    expect(topUps).toHaveLength(2);
    expectOneLineUserError(await judge("ledger", "export", "--account", account.id, "--kind", "refund"), /^judge: --kind: unknown kind "refund"/);
  });

  it("prints usage per account and day as CSV (no judgments yet: the header only)", async () => {
    expect(await judgeOk("ledger", "usage", "--days", "7")).toBe("date,account_id,account_name,requests,questions,input_tokens,charged_micro,charged_eur\r\n");
    expectOneLineUserError(await judge("ledger", "usage", "--days", "0"), /^judge: --days/);
  });
});
