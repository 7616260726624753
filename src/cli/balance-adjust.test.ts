import { describe, expect, it } from "vitest";
import { expectOneLineUserError, useCliHarness } from "./test-helpers.js";
import type { AccountJson, LedgerCheckJson, LedgerEntryJson } from "../views/money.js";

/** `judge balance adjust`: a correction as its own ledger entry, never below zero. */

const { judge, judgeOk, judgeJson } = useCliHarness();

interface EntryJson {
  entry: LedgerEntryJson;
  balance_micro: number;
  balance: string;
}

describe("judge balance adjust", () => {
  it("reverses part of a mistaken top-up with a negative amount and a note; refuses going below zero in one line", async () => {
    const account = await judgeJson<AccountJson>("accounts", "create", "--name", "acme");
    await judgeOk("balance", "top-up", "--account", account.id, "--amount", "5");
    const adjusted = await judgeJson<EntryJson>("balance", "adjust", "--account", account.id, "--amount", "-1.50", "--note", "duplicate top-up");
    expect(adjusted, JSON.stringify(adjusted)).toMatchObject({
      entry: { kind: "adjustment", amount_micro: -1_500_000, note: "duplicate top-up" },
      balance_micro: 3_500_000,
      balance: "3.50",
    });
    const text = await judgeOk("balance", "adjust", "--account", account.id, "--amount", "0.25", "--note", "goodwill");
    expect(text).toMatch(/^Adjusted acct_\w+ \(acme\) by \+€0\.25; balance is now €3\.75 \(ledger entry \d+\)\.\n$/);
    expectOneLineUserError(
      await judge("balance", "adjust", "--account", account.id, "--amount", "-3.750001", "--note", "too much"),
      /^judge: an adjustment of 3750001 µ€ would take the balance below zero: it is 3750000 µ€\n$/,
    );
    expectOneLineUserError(
      await judge("balance", "adjust", "--account", account.id, "--amount", "-1"),
      /^judge: required option '--note <text>' not specified/,
    );
    const check = await judgeJson<LedgerCheckJson>("ledger", "check");
    expect(check, JSON.stringify(check)).toMatchObject({ ok: true });
  });
});
