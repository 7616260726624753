import { formatEuros } from "../money/money.js";
import type { accountView, ledgerCheckView, ledgerEntryView, planView } from "./admin.js";

/**
 * Money and times as the CLI's tables and messages print them. The `--json` shapes of billing
 * records are the admin API's own (src/views/admin.ts), so a script can move between the
 * CLI and HTTP unchanged.
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

/** The `--json` shapes, for typing parsed output (type-only: importing them loads nothing). */
export type PlanJson = ReturnType<typeof planView>;
export type AccountJson = ReturnType<typeof accountView>;
export type LedgerEntryJson = ReturnType<typeof ledgerEntryView>;
export type LedgerCheckJson = ReturnType<typeof ledgerCheckView>;
