import { describe, expect, it } from "vitest";
import { createBillingService } from "../services/billing.js";
import type { Reservation, Store } from "../store/store.js";
import { payerOf } from "../testing/billing-store.js";
import { expectOneLineUserError, useCliHarness } from "./test-helpers.js";
import type { AccountJson, LedgerEntryJson, PlanJson } from "../views/money.js";

const { database, judge, judgeOk, judgeJson } = useCliHarness();

interface ShowJson {
  account: AccountJson;
  plan: PlanJson;
  ledger: LedgerEntryJson[];
}

/** Holds one request's charge the way the server does (the billing service), so the CLI has real usage to show. */
async function reserve(store: Store, accountId: string, inputTokens: number): Promise<Reservation> {
  const billing = createBillingService(store, Date.now);
  return billing.reserve(await payerOf(store, accountId), { questions: 1, inputTokens, requestId: `req_${inputTokens}` });
}

async function withFileStore<T>(run: (store: Store) => Promise<T>): Promise<T> {
  const store = await database().store();
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

describe("judge accounts", () => {
  it("creates accounts on the default or a named plan and lists plan, balance and usage", async () => {
    await judgeOk("plans", "create", "--name", "pro", "--rpm", "600", "--allowance", "10000", "--price", "0.05");
    const onDefault = await judgeJson<AccountJson>("accounts", "create", "--name", "Acme");
    const created = await judgeOk("accounts", "create", "--name", "Globex", "--plan", "pro");
    expect(onDefault, JSON.stringify(onDefault)).toMatchObject({
      id: expect.stringMatching(/^acct_/),
      plan: { id: "plan_default", name: "default" },
      balance_micro: 0,
      balance: "0.00",
      reserved_micro: 0,
      usage: { used: 0, reserved: 0, allowance: 1000, percent_used: 0 },
    });
    expect(created, created).toMatch(/^Created account acct_\w+ \(Globex\) on plan pro\.\n/);

    const list = await judgeJson<AccountJson[]>("accounts", "list");
    expect(list, JSON.stringify(list)).toHaveLength(2);
    expect(list[0], JSON.stringify(list)).toEqual(onDefault);
    expect(list[1], JSON.stringify(list)).toMatchObject({ name: "Globex", plan: { name: "pro" }, usage: { allowance: 10000 } });
    const text = await judgeOk("accounts", "list");
    expect(text, text).toMatch(/^ID\s+NAME\s+STATUS\s+PLAN\s+BALANCE\s+USED\/ALLOWANCE\s+CREATED$/m);
    expect(text, text).toMatch(/^acct_\w+\s+Globex\s+active\s+pro\s+€0\.00\s+0\/10000\s/m);

    expectOneLineUserError(await judge("accounts", "create", "--name", "Initech", "--plan", "gold"), /^judge: No plan with id or name gold$/m);
    expect(await judgeJson<unknown[]>("accounts", "list")).toHaveLength(2);
  });

  it("shows the period, usage, held amount and recent ledger of an account", async () => {
    await judgeOk("plans", "create", "--name", "one", "--rpm", "60", "--allowance", "1", "--price", "1");
    const account = await judgeJson<AccountJson>("accounts", "create", "--name", "Acme", "--plan", "one");
    await judgeOk("balance", "top-up", "--account", account.id, "--amount", "1");
    // The first question fits the allowance; the second is held on the balance: 1000 tokens at €1/M.
    const held = await withFileStore(async (store) => {
      await store.billing.settle(await reserve(store, account.id, 10));
      return reserve(store, account.id, 1000);
    });

    const shown = await judgeJson<ShowJson>("accounts", "show", account.id);
    expect(shown.account, JSON.stringify(shown)).toMatchObject({
      balance_micro: 1_000_000,
      balance: "1.00",
      reserved_micro: 1000,
      reserved: "0.001",
      usage: { used: 1, reserved: 0, allowance: 1, percent_used: 100, period_start: account.created_at },
    });
    expect(shown.plan, JSON.stringify(shown)).toMatchObject({ name: "one", price_per_million: "1.00" });
    expect(
      shown.ledger.map((entry) => entry.kind),
      JSON.stringify(shown),
    ).toEqual(["plan", "top_up"]);
    expect(await judgeOk("ledger", "check"), "a hold in flight is not a mismatch").toMatch(/^OK: 1 account checked/);

    await withFileStore((store) => store.billing.settle(held));
    const text = await judgeOk("accounts", "show", account.id, "--limit", "2");
    expect(text, text).toContain(`Plan      one (${account.plan.id}): 60 requests/minute, 1 question per period`);
    expect(text, text).toContain(`Period    [${account.created_at}, ${account.usage.period_end})`);
    expect(text, text).toContain("Questions 1 used, 0 reserved, of 1 allowed");
    expect(text, text).toContain("Balance   €0.999, of which €0.00 held by requests in flight");
    expect(text, text).toMatch(/^3\s+\S+ \S+Z\s+charge\s+-€0\.001\s+1\s+1000\s+req_1000$/m);
    expect(text, text).not.toMatch(/top_up/);
    expect(await judgeOk("ledger", "check")).toMatch(/^OK: 1 account checked/);

    expectOneLineUserError(await judge("accounts", "show", "acct_missing"), /^judge: No account with id acct_missing$/m);
  });

  it("moves an account to another plan by name or id", async () => {
    const pro = await judgeJson<PlanJson>("plans", "create", "--name", "pro", "--rpm", "600", "--allowance", "5", "--price", "0");
    const account = await judgeJson<AccountJson>("accounts", "create", "--name", "Acme");
    const moved = await judgeJson<AccountJson>("accounts", "set-plan", account.id, "pro");
    expect(moved, JSON.stringify(moved)).toMatchObject({ id: account.id, plan: { id: pro.id }, usage: { allowance: 5 } });
    const back = await judgeOk("accounts", "set-plan", account.id, "plan_default");
    expect(back, back).toBe(`Account ${account.id} (Acme) is now on plan default.\n`);

    const [noAccount, noPlan] = await Promise.all([judge("accounts", "set-plan", "acct_missing", "pro"), judge("accounts", "set-plan", account.id, "gold")]);
    expectOneLineUserError(noAccount!, /^judge: No account with id acct_missing$/m);
    expectOneLineUserError(noPlan!, /^judge: No plan with id or name gold$/m);
    const keyed = await judgeJson<{ record: { accountId: string } }>("keys", "create", "--account", account.id);
    expect(keyed.record.accountId, "keys still work on accounts that changed plan").toBe(account.id);
  });
});
