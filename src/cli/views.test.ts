import { describe, expect, it } from "vitest";
import { accountView, ledgerCheckView, ledgerEntryView, planView } from "../routes/admin/views.js";
import type { Account, LedgerEntry, Plan, Usage } from "../store/store.js";
import { accountJson, ledgerCheckJson, ledgerEntryJson, planJson } from "./views.js";

// The CLI's --json output promises the admin API's shapes; this keeps the two copies equal.

const plan: Plan = {
  id: "plan_pro",
  name: "pro",
  requestsPerMinute: 600,
  allowanceQuestions: 10_000,
  pricePerMillion: 1_234_567,
  createdAt: Date.UTC(2025, 0, 1),
};
const account: Account = {
  id: "acct_a",
  name: "Acme",
  createdAt: Date.UTC(2025, 0, 31, 10),
  planId: plan.id,
  balanceMicro: 12_345_679,
  reservedMicro: 1_000,
};
const usage: Usage = {
  accountId: account.id,
  period: { start: Date.UTC(2025, 1, 28, 10), end: Date.UTC(2025, 2, 31, 10) },
  used: 9_000,
  reserved: 1_000,
  allowance: 10_000,
  balanceMicro: account.balanceMicro,
  reservedMicro: account.reservedMicro,
};
const charge: LedgerEntry = {
  id: 7,
  accountId: account.id,
  at: Date.UTC(2025, 2, 1),
  kind: "charge",
  amountMicro: -1_000,
  questions: 3,
  inputTokens: 810,
  periodStart: usage.period.start,
  requestId: "req_1",
  note: null,
};

describe("CLI JSON views", () => {
  it("are the admin API's views", () => {
    expect(planJson(plan)).toEqual(planView(plan));
    expect(accountJson(account, plan, usage)).toEqual(accountView(account, plan, usage));
    expect(ledgerEntryJson(charge)).toEqual(ledgerEntryView(charge));
    const check = { ok: false, accounts: 1, mismatches: [{ accountId: "acct_a", what: "balance", unit: "micro_eur" as const, column: 2, ledgerSum: 1 }] };
    expect(ledgerCheckJson(check)).toEqual(ledgerCheckView(check));
  });

  it("give money as exact integers and exact decimal strings", () => {
    expect(accountJson(account, plan, usage)).toMatchObject({
      balance_micro: 12_345_679,
      balance: "12.345679",
      reserved: "0.001",
      usage: { period_start: "2025-02-28T10:00:00.000Z", percent_used: 100 },
    });
    expect(ledgerEntryJson(charge)).toMatchObject({ amount_micro: -1_000, amount: "-0.001" });
    expect(planJson(plan)).toMatchObject({ price_per_million_micro: 1_234_567, price_per_million: "1.234567" });
  });
});
