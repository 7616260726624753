import type { AdminActor } from "./audit-types.js";

/** What the ledger repository (ledger.ts) takes and hands out; re-exported by types.ts. */

export interface LedgerEntry {
  id: number;
  accountId: string;
  at: number;
  kind: "top_up" | "charge" | "plan" | "adjustment";
  amountMicro: number;
  questions: number;
  inputTokens: number;
  periodStart: number | null;
  requestId: string | null;
  note: string | null;
  /** The API key a judgment was made with (null for other kinds, and entries before keys were recorded). */
  keyId: string | null;
  /** The model that answered a judgment (absent for other entries and older ones). */
  model?: string;
}

export interface Usage {
  accountId: string;
  period: { start: number; end: number };
  used: number;
  reserved: number;
  allowance: number;
  balanceMicro: number;
  reservedMicro: number;
}

export interface LedgerCheck {
  ok: boolean;
  accounts: number;
  /** Accounts whose balance or period usage differs from the sum of their ledger entries. */
  mismatches: { accountId: string; what: string; unit: "micro_eur" | "questions"; column: number; ledgerSum: number }[];
}

/** What a stretch of time saw in the ledger: judgments (plan and charge entries) and top-ups. */
export interface LedgerActivity {
  /** Judgment requests settled (one ledger entry each). */
  requests: number;
  questions: number;
  inputTokens: number;
  /** Micro-euros charged to balances (positive): exact, as a sum across accounts may pass 2^53. */
  chargedMicro: bigint;
  toppedUpMicro: bigint;
}

/** One UTC day of an account's judgments; `day` is the day's midnight. */
export interface DailyUsage {
  day: number;
  requests: number;
  questions: number;
  inputTokens: number;
  chargedMicro: number;
}

/** A stretch of an account's judgments answered by one model (null: recorded before models were). */
export interface ModelUsage {
  model: string | null;
  requests: number;
  /** Allowance units: questions × the model's multiplier, as the plan counted them. */
  questions: number;
  inputTokens: number;
  chargedMicro: number;
}

export interface LedgerRepository {
  topUp(accountId: string, amountMicro: number, note?: string, by?: AdminActor): Promise<{ entry: LedgerEntry; balanceMicro: number }>;
  /** A correction, positive or negative, as its own "adjustment" entry; never below zero (nor below what is held). */
  adjust(accountId: string, amountMicro: number, note: string, by?: AdminActor): Promise<{ entry: LedgerEntry; balanceMicro: number }>;
  /** Newest first; `before` (an entry id) pages further back. */
  entries(accountId: string, options?: { limit?: number; before?: number }): Promise<LedgerEntry[]>;
  /** A page of `entries`, with the `before` of the next page, or null when this page is the last. */
  entryPage(accountId: string, options: { limit: number; before?: number }): Promise<{ entries: LedgerEntry[]; nextBefore: number | null }>;
  /** The account's judgments from `start` (included) to `end` (excluded), by UTC day; days without any are absent. */
  usageByDay(accountId: string, range: { start: number; end: number }): Promise<DailyUsage[]>;
  /** The account's judgments from `start` (included) to `end` (excluded), by the model that answered. */
  usageByModel(accountId: string, range: { start: number; end: number }): Promise<ModelUsage[]>;
  /** Every account's judgments and top-ups from `start` (included) to `end` (excluded). */
  activity(range: { start: number; end: number }): Promise<LedgerActivity>;
  /** The account's balance and its usage of `period` (which the caller computes). */
  usage(accountId: string, period: { start: number; end: number }): Promise<Usage | undefined>;
  check(): Promise<LedgerCheck>;
}
