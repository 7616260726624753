import { z } from "@hono/zod-openapi";
import { formatEuros, percentUsed } from "../money/money.js";
import type { Account, ApiKeyRecord, KeyedLedgerEntry, LedgerCheck, LedgerEntry, Plan, Usage } from "../services/types.js";

/**
 * The JSON the admin API answers with. Money is given twice: `*_micro` as an integer number of
 * micro-euros for programs, and the same amount as an exact decimal euro string for people.
 * Times are ISO 8601 strings in UTC.
 */

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));
const Time = z.string().openapi({ description: "ISO 8601, UTC.", example: "2026-01-31T10:00:00.000Z" });
const micro = (what: string) =>
  z
    .number()
    .int()
    .openapi({ description: `${what}, in micro-euros (1 € = 1,000,000).` });
const euros = (what: string) => z.string().openapi({ description: `${what}, exact decimal euros.`, example: "12.50" });

export const PlanView = z
  .object({
    id: z.string(),
    name: z.string(),
    requests_per_minute: z.number().int(),
    allowance_questions: z.number().int().openapi({ description: "Questions per monthly period before requests are billed to the balance." }),
    price_per_million_micro: micro("Price per million input tokens billed to the balance"),
    price_per_million: euros("Price per million input tokens billed to the balance"),
    created_at: Time,
    allowed_models: z.array(z.string()).optional().openapi({ description: "The model ids its keys may use; absent: every model." }),
  })
  .openapi("AdminPlan");

export function planView(plan: Plan): z.infer<typeof PlanView> {
  return {
    id: plan.id,
    name: plan.name,
    requests_per_minute: plan.requestsPerMinute,
    allowance_questions: plan.allowanceQuestions,
    price_per_million_micro: plan.pricePerMillion,
    price_per_million: formatEuros(plan.pricePerMillion),
    created_at: iso(plan.createdAt),
    ...(plan.allowedModels && { allowed_models: plan.allowedModels }),
  };
}

export const UsageView = z
  .object({
    period_start: Time,
    period_end: Time,
    used: z.number().int().openapi({ description: "Questions of the current period billed to the plan." }),
    reserved: z.number().int().openapi({ description: "Questions held by requests in flight." }),
    allowance: z.number().int(),
    percent_used: z.number().int().openapi({ description: "(used + reserved) / allowance, whole percent rounded down, as x-plan-usage reports it." }),
  })
  .openapi("AdminUsage");

export function usageView(usage: Usage): z.infer<typeof UsageView> {
  return {
    period_start: iso(usage.period.start),
    period_end: iso(usage.period.end),
    used: usage.used,
    reserved: usage.reserved,
    allowance: usage.allowance,
    percent_used: percentUsed(usage.used + usage.reserved, usage.allowance),
  };
}

export const AccountView = z
  .object({
    id: z.string(),
    name: z.string(),
    created_at: Time,
    plan: z.object({ id: z.string(), name: z.string() }),
    balance_micro: micro("Prepaid balance, including the part held by requests in flight"),
    balance: euros("Prepaid balance"),
    reserved_micro: micro("Part of the balance held by requests in flight"),
    reserved: euros("Part of the balance held by requests in flight"),
    usage: UsageView,
    disabled: z.boolean().openapi({ description: "A disabled account's keys get 401 account_disabled; nothing is deleted." }),
    disabled_at: Time.nullable(),
  })
  .openapi("AdminAccount");

export function accountView(account: Account, plan: Plan, usage: Usage): z.infer<typeof AccountView> {
  return {
    id: account.id,
    name: account.name,
    created_at: iso(account.createdAt),
    plan: { id: plan.id, name: plan.name },
    balance_micro: account.balanceMicro,
    balance: formatEuros(account.balanceMicro),
    reserved_micro: account.reservedMicro,
    reserved: formatEuros(account.reservedMicro),
    usage: usageView(usage),
    disabled: account.disabledAt !== null,
    disabled_at: isoOrNull(account.disabledAt),
  };
}

export const LedgerEntryView = z
  .object({
    id: z.number().int(),
    at: Time,
    kind: z.enum(["top_up", "charge", "plan", "adjustment"]),
    amount_micro: micro("Change to the balance (negative for charges)"),
    amount: euros("Change to the balance"),
    questions: z.number().int(),
    input_tokens: z.number().int(),
    period_start: Time.nullable(),
    request_id: z.string().nullable().openapi({ description: "The judgment's X-Request-Id (null for top-ups and adjustments)." }),
    note: z.string().nullable(),
    key: z
      .object({ id: z.string(), prefix: z.string(), name: z.string().nullable() })
      .nullable()
      .optional()
      .openapi({ description: "The API key a judgment was made with; null for other kinds and for entries made before keys were recorded." }),
    model: z.string().optional().openapi({ description: "The model that answered (judgments; absent for other entries and older ones)." }),
  })
  .openapi("AdminLedgerEntry");

export function ledgerEntryView(entry: LedgerEntry & { key?: KeyedLedgerEntry["key"] }): z.infer<typeof LedgerEntryView> {
  return {
    id: entry.id,
    at: iso(entry.at),
    kind: entry.kind,
    amount_micro: entry.amountMicro,
    amount: formatEuros(entry.amountMicro),
    questions: entry.questions,
    input_tokens: entry.inputTokens,
    period_start: isoOrNull(entry.periodStart),
    request_id: entry.requestId,
    note: entry.note,
    ...(entry.key !== undefined && { key: entry.key }),
    ...(entry.model !== undefined && { model: entry.model }),
  };
}

export const KeyView = z
  .object({
    id: z.string(),
    account_id: z.string(),
    name: z.string().nullable(),
    prefix: z.string().openapi({ description: "The first characters of the key; the key itself is never stored." }),
    created_at: Time,
    last_used_at: Time.nullable(),
    revoked_at: Time.nullable(),
    requests_per_minute: z.number().int().nullable().openapi({ description: "The key's own per-minute limit, on top of the plan's; null: none." }),
    budget_micro: micro("The most the key may ever charge to the balance; null: no budget").nullable(),
    budget: euros("The key's budget").nullable(),
    expires_at: Time.nullable().openapi({ description: "From this instant the key gets 401 key_expired; null: never." }),
    spent_micro: micro("Charged to the balance through this key so far"),
    spent: euros("Charged to the balance through this key so far"),
    held_micro: micro("Held against the key by its requests in flight"),
  })
  .openapi("AdminKey");

export function keyView(record: ApiKeyRecord): z.infer<typeof KeyView> {
  return {
    id: record.id,
    account_id: record.accountId,
    name: record.name,
    prefix: record.prefix,
    created_at: iso(record.createdAt),
    last_used_at: isoOrNull(record.lastUsedAt),
    revoked_at: isoOrNull(record.revokedAt),
    requests_per_minute: record.limits.requestsPerMinute,
    budget_micro: record.limits.budgetMicro,
    budget: record.limits.budgetMicro === null ? null : formatEuros(record.limits.budgetMicro),
    expires_at: isoOrNull(record.limits.expiresAt),
    spent_micro: record.spentMicro,
    spent: formatEuros(record.spentMicro),
    held_micro: record.heldMicro,
  };
}

export const LedgerCheckView = z
  .object({
    ok: z.boolean(),
    accounts: z.number().int(),
    mismatches: z.array(
      z.object({
        account_id: z.string(),
        what: z.string(),
        unit: z.enum(["micro_eur", "questions"]).openapi({ description: "What column and ledger_sum count." }),
        column: z.number().int(),
        ledger_sum: z.number().int(),
      }),
    ),
  })
  .openapi("AdminLedgerCheck");

export function ledgerCheckView(check: LedgerCheck): z.infer<typeof LedgerCheckView> {
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
