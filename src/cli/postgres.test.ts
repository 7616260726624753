import { describe, expect, it } from "vitest";
import { POSTGRES_TEST_URL } from "../testing/databases.js";
import { useCliHarness } from "./test-helpers.js";
import type { AccountJson, LedgerCheckJson, LedgerEntryJson, PlanJson } from "../views/money.js";

/**
 * The CLI on PostgreSQL: `--db postgres://…` with JUDGE_DB_SCHEMA in the environment, as an
 * operator of a PostgreSQL deployment runs it. The other CLI tests cover every command on
 * SQLite; this one proves the same commands keep exact money on the other engine, in the
 * schema named and nowhere else.
 */
const { database, judgeOk, judgeJson } = useCliHarness("postgres");

interface TopUpJson {
  entry: LedgerEntryJson;
  balance_micro: number;
  balance: string;
}

interface ShowJson {
  account: AccountJson;
  plan: PlanJson;
  ledger: LedgerEntryJson[];
}

describe("judge on PostgreSQL", () => {
  it("creates a plan and an account, tops up exact amounts and checks the ledger, in the schema of JUDGE_DB_SCHEMA", async () => {
    expect(database().location).toBe(POSTGRES_TEST_URL);
    const plan = await judgeJson<PlanJson>("plans", "create", "--name", "pro", "--rpm", "600", "--allowance", "10000", "--price", "1.234567");
    expect(plan, JSON.stringify(plan)).toMatchObject({ name: "pro", price_per_million_micro: 1_234_567, price_per_million: "1.234567" });
    const account = await judgeJson<AccountJson>("accounts", "create", "--name", "Acme", "--plan", "pro");
    expect(account, JSON.stringify(account)).toMatchObject({ plan: { id: plan.id, name: "pro" }, balance_micro: 0, balance: "0.00" });

    const first = await judgeJson<TopUpJson>("balance", "top-up", "--account", account.id, "--amount", "0.000001");
    expect(first, JSON.stringify(first)).toMatchObject({ balance_micro: 1, balance: "0.000001" });
    // 0.1 + 0.2 is where floating point would show: 0.30000000000000004.
    await judgeOk("balance", "top-up", "--account", account.id, "--amount", "0.1");
    const third = await judgeOk("balance", "top-up", "--account", account.id, "--amount", "0.2", "--note", "invoice 7");
    expect(third, third).toBe(`Topped up ${account.id} (Acme) by €0.20; balance is now €0.300001 (ledger entry 3).\n`);

    expect(await judgeJson<LedgerCheckJson>("ledger", "check")).toEqual({ ok: true, accounts: 1, mismatches: [] });
    const shown = await judgeJson<ShowJson>("accounts", "show", account.id);
    expect(shown.account, JSON.stringify(shown)).toMatchObject({
      id: account.id,
      balance_micro: 300_001,
      balance: "0.300001",
      reserved_micro: 0,
      usage: { used: 0, reserved: 0, allowance: 10000, percent_used: 0 },
    });
    expect(shown.plan, JSON.stringify(shown)).toMatchObject({ id: plan.id, price_per_million_micro: 1_234_567 });
    expect(
      shown.ledger.map((entry) => [entry.kind, entry.amount_micro, entry.note]),
      JSON.stringify(shown),
    ).toEqual([
      ["top_up", 200_000, "invoice 7"],
      ["top_up", 100_000, null],
      ["top_up", 1, null],
    ]);

    // The rows are in the test's schema: a store opened on it (not on public) sees the same balance.
    const store = await database().store();
    try {
      expect((await store.accounts.get(account.id))?.balanceMicro).toBe(300_001);
    } finally {
      await store.close();
    }
  });
});
