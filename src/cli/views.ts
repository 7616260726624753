import { formatEuros, percentUsed } from "../billing/money.js";
import type { Account, LedgerEntry, Plan, Usage } from "../store/store.js";
import type { LedgerCheck } from "../store/types.js";

/**
 * The `--json` shapes of billing records: the same as the admin API's (src/routes/admin/views.ts,
 * kept equal by views.test.ts), so a script can move between the CLI and HTTP unchanged. Money
 * is given twice: `*_micro` as an exact integer of micro-euros for arithmetic, and the same
 * amount as an exact decimal euro string for people; neither is ever a float. Times are ISO
 * 8601 in UTC. Defined here rather than imported so the CLI does not load the HTTP layer.
 */

/** `€12.50`; negative amounts read `-€0.01`. */
export function formatMoney(micros: number): string {
  return micros < 0 ? `-€${formatEuros(-micros)}` : `€${formatEuros(micros)}`;
}

/** Ledger amounts carry their direction: `+€12.50` credited, `-€0.01` debited. */
export function formatSignedMoney(micros: number): string {
  return micros > 0 ? `+${formatMoney(micros)}` : formatMoney(micros);
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

export function planJson(plan: Plan) {
  return {
    id: plan.id,
    name: plan.name,
    requests_per_minute: plan.requestsPerMinute,
    allowance_questions: plan.allowanceQuestions,
    price_per_million_micro: plan.pricePerMillion,
    price_per_million: formatEuros(plan.pricePerMillion),
    created_at: isoTime(plan.createdAt),
  };
}
export type PlanJson = ReturnType<typeof planJson>;

export function usageJson(usage: Usage) {
  return {
    period_start: isoTime(usage.period.start),
    period_end: isoTime(usage.period.end),
    used: usage.used,
    reserved: usage.reserved,
    allowance: usage.allowance,
    // Counts held questions too, as the x-plan-usage header does.
    percent_used: percentUsed(usage.used + usage.reserved, usage.allowance),
  };
}

export function accountJson(account: Account, plan: Plan, usage: Usage) {
  return {
    id: account.id,
    name: account.name,
    created_at: isoTime(account.createdAt),
    plan: { id: plan.id, name: plan.name },
    balance_micro: account.balanceMicro,
    balance: formatEuros(account.balanceMicro),
    reserved_micro: account.reservedMicro,
    reserved: formatEuros(account.reservedMicro),
    usage: usageJson(usage),
  };
}
export type AccountJson = ReturnType<typeof accountJson>;

export function ledgerEntryJson(entry: LedgerEntry) {
  return {
    id: entry.id,
    at: isoTime(entry.at),
    kind: entry.kind,
    amount_micro: entry.amountMicro,
    amount: formatEuros(entry.amountMicro),
    questions: entry.questions,
    input_tokens: entry.inputTokens,
    period_start: entry.periodStart === null ? null : isoTime(entry.periodStart),
    request_id: entry.requestId,
    note: entry.note,
  };
}
export type LedgerEntryJson = ReturnType<typeof ledgerEntryJson>;

/** `column` and `ledger_sum` are micro-euros for balances and question counts for periods. */
export function ledgerCheckJson(check: LedgerCheck) {
  return {
    ok: check.ok,
    accounts: check.accounts,
    mismatches: check.mismatches.map((m) => ({
      account_id: m.accountId,
      what: m.what,
      unit: m.unit,
      column: m.column,
      ledger_sum: m.ledgerSum,
    })),
  };
}
export type LedgerCheckJson = ReturnType<typeof ledgerCheckJson>;
