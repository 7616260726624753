import BetterSqlite3 from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { expectOneLineUserError, useCliHarness } from "./test-helpers.js";
import type { AccountJson, LedgerCheckJson, LedgerEntryJson, PlanJson } from "../views/money.js";

// Each run starts a real `judge` process (≈1–2 s on a busy machine), so every edge case that
// needs no wiring is covered by options.test.ts instead, and refusals run side by side.
const { database, judge, judgeOk, judgeJson } = useCliHarness();

interface TopUpJson {
  entry: LedgerEntryJson;
  balance_micro: number;
  balance: string;
}

const createAccount = (name: string) => judgeJson<AccountJson>("accounts", "create", "--name", name);
const planNames = async () => (await judgeJson<PlanJson[]>("plans", "list")).map((plan) => plan.name);

describe("judge plans", () => {
  it("creates, updates and lists plans, showing the price back exactly", async () => {
    const pro = await judgeJson<PlanJson>("plans", "create", "--name", "pro", "--rpm", "600", "--allowance", "10000", "--price", "0.05");
    expect(pro, JSON.stringify(pro)).toMatchObject({
      id: expect.stringMatching(/^plan_/),
      name: "pro",
      requests_per_minute: 600,
      allowance_questions: 10000,
      price_per_million_micro: 50000,
      price_per_million: "0.05",
    });

    const byName = await judgeJson<PlanJson>("plans", "update", "pro", "--price", "1.234567", "--rpm", "5");
    expect(byName, JSON.stringify(byName)).toMatchObject({
      requests_per_minute: 5,
      allowance_questions: 10000,
      price_per_million_micro: 1234567,
      price_per_million: "1.234567",
    });
    const byId = await judgeOk("plans", "update", pro.id, "--name", "pro-2024", "--allowance", "0");
    expect(byId, byId).toBe(`Updated plan ${pro.id} (pro-2024): 5 requests/minute, 0 questions per period, ` + "then €1.234567 per million input tokens.\n");

    expect(await planNames()).toEqual(["default", "pro-2024"]);
    const text = await judgeOk("plans", "list");
    expect(text, text).toMatch(/^plan_\w+\s+pro-2024\s+5\s+0\s+€1\.234567\s/m);
  });

  it("refuses invalid plans with one line and exit code 1, writing nothing", async () => {
    // Created first, alone: processes that open a brand-new database at once can race.
    expect(await planNames()).toEqual(["default"]);
    const create = (rpm: string, allowance: string, price: string) =>
      judge("plans", "create", "--name", "bad", "--rpm", rpm, "--allowance", allowance, "--price", price);
    const [rpm, allowance, price, duplicate, empty, unknown] = await Promise.all([
      create("0", "10", "0.05"),
      create("1", "-1", "0.05"),
      create("1", "10", "1e3"),
      judge("plans", "create", "--name", "default", "--rpm", "1", "--allowance", "0", "--price", "0"),
      judge("plans", "update", "default"),
      judge("plans", "update", "gold", "--rpm", "5"),
    ]);
    expectOneLineUserError(rpm!, /^judge: --rpm must be a whole number from 1 to \d+, got "0"$/m);
    expectOneLineUserError(allowance!, /^judge: --allowance must be a whole number from 0 to \d+, got "-1"$/m);
    expectOneLineUserError(price!, /^judge: --price must be an amount of euros .*; got "1e3"$/m);
    expectOneLineUserError(duplicate!, /^judge: A plan named default already exists$/m);
    expectOneLineUserError(empty!, /^judge: Nothing to update: pass --name/);
    expectOneLineUserError(unknown!, /^judge: No plan with id or name gold$/m);

    expectOneLineUserError(await judge("plans", "update", "default", "--price", "0.0000001"), /at most 6 decimals/);
    const plans = await judgeJson<PlanJson[]>("plans", "list");
    expect(plans, JSON.stringify(plans)).toMatchObject([{ name: "default", requests_per_minute: 60, allowance_questions: 1000, price_per_million: "0.05" }]);
  });
});

describe("judge balance top-up", () => {
  it("adds exact decimal amounts without rounding", async () => {
    const account = await createAccount("Acme");
    const first = await judgeJson<TopUpJson>("balance", "top-up", "--account", account.id, "--amount", "0.000001");
    expect(first, JSON.stringify(first)).toMatchObject({ balance_micro: 1, balance: "0.000001" });

    const second = await judgeOk("balance", "top-up", "--account", account.id, "--amount", "12.345678", "--note", "invoice 7");
    expect(second, second).toBe(`Topped up ${account.id} (Acme) by €12.345678; balance is now €12.345679 (ledger entry 2).\n`);

    const entries = await judgeJson<LedgerEntryJson[]>("ledger", "list", "--account", account.id);
    expect(entries, JSON.stringify(entries)).toMatchObject([
      { id: 2, kind: "top_up", amount_micro: 12345678, amount: "12.345678", note: "invoice 7" },
      { id: 1, kind: "top_up", amount_micro: 1, amount: "0.000001", note: null },
    ]);
    const [listed] = await judgeJson<AccountJson[]>("accounts", "list");
    expect(listed, JSON.stringify(listed)).toMatchObject({ balance_micro: 12345679, balance: "12.345679" });
  });

  it("refuses amounts that are not positive euros with at most 6 decimals, writing nothing", async () => {
    const account = await createAccount("Acme");
    const amounts = ["-1", "1e3", "1.0000001", "0"];
    const runs = await Promise.all([
      ...amounts.map((amount) => judge("balance", "top-up", "--account", account.id, "--amount", amount)),
      judge("balance", "top-up", "--account", "acct_missing", "--amount", "5"),
    ]);
    amounts.forEach((amount, i) =>
      expectOneLineUserError(runs[i]!, new RegExp(`^judge: --amount must be an amount of euros from €0\\.000001 .*; got "${amount}"$`, "m")),
    );
    expectOneLineUserError(runs[amounts.length]!, /^judge: No account with id acct_missing$/m);

    expect(await judgeJson<unknown[]>("ledger", "list", "--account", account.id)).toEqual([]);
    expect((await judgeJson<AccountJson[]>("accounts", "list"))[0]?.balance_micro).toBe(0);
  });
});

describe("judge ledger", () => {
  it("lists the newest entries first, up to --limit, and refuses unknown accounts and bad limits", async () => {
    const account = await createAccount("Acme");
    for (const amount of ["1", "2", "3"]) await judgeOk("balance", "top-up", "--account", account.id, "--amount", amount);

    const newest = await judgeJson<LedgerEntryJson[]>("ledger", "list", "--account", account.id, "--limit", "2");
    expect(
      newest.map((entry) => entry.amount),
      JSON.stringify(newest),
    ).toEqual(["3.00", "2.00"]);
    const text = await judgeOk("ledger", "list", "--account", account.id);
    expect(text.trim().split("\n"), text).toHaveLength(4);
    expect(text, text).toMatch(/^3\s+\S+ \S+Z\s+top_up\s+\+€3\.00\s+0\s+0$/m);

    const [unknown, badLimit] = await Promise.all([
      judge("ledger", "list", "--account", "acct_missing"),
      judge("ledger", "list", "--account", account.id, "--limit", "0"),
    ]);
    expectOneLineUserError(unknown!, /^judge: No account with id acct_missing$/m);
    expectOneLineUserError(badLimit!, /^judge: --limit must be a whole number from 1 to 500, got "0"$/m);
  });

  it("passes on a consistent database and fails, naming the account, when a balance is tampered with", async () => {
    expect(await judgeOk("ledger", "check"), "empty database").toMatch(/^OK: 0 accounts checked/);
    const tampered = await createAccount("Tampered");
    const intact = await createAccount("Intact");
    await judgeOk("balance", "top-up", "--account", tampered.id, "--amount", "12.50");
    await judgeOk("balance", "top-up", "--account", intact.id, "--amount", "1");
    expect(await judgeJson<LedgerCheckJson>("ledger", "check")).toEqual({ ok: true, accounts: 2, mismatches: [] });

    // The ledger refuses updates by trigger; the accounts table is where tampering can happen.
    const raw = new BetterSqlite3(database().location);
    raw.prepare("UPDATE accounts SET balance_micro = balance_micro + 1 WHERE id = ?").run(tampered.id);
    raw.close();

    const [run, json] = await Promise.all([judge("ledger", "check"), judge("ledger", "check", "--json")]);
    expectOneLineUserError(run!, new RegExp(`^judge: ledger check failed for ${tampered.id}$`, "m"));
    expect(run!.stdout, run!.stdout).toBe(
      "FAILED: 1 mismatch(es), 2 accounts checked:\n" + `  ${tampered.id} balance: stored €12.500001, ledger says €12.50\n`,
    );
    expectOneLineUserError(json!, /ledger check failed/);
    expect(JSON.parse(json!.stdout), json!.stdout).toEqual({
      ok: false,
      accounts: 2,
      mismatches: [{ account_id: tampered.id, what: "balance", unit: "micro_eur", column: 12500001, ledger_sum: 12500000 }],
    });
  });
});
