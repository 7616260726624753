import type { LedgerEntry } from "./ledger-types.js";

/** What the reports repository (reports.ts) hands out: the console's views across accounts. */

export type LedgerKind = LedgerEntry["kind"];

/** One UTC day across every account; money exact (a day's sum across accounts may pass 2^53 µ€). */
export interface DayActivity {
  day: number;
  requests: number;
  questions: number;
  inputTokens: number;
  chargedMicro: bigint;
  toppedUpMicro: bigint;
}

export interface BusyAccount {
  accountId: string;
  name: string;
  requests: number;
  questions: number;
  chargedMicro: bigint;
}

/** One account's judgments on one UTC day. */
export interface AccountDay {
  day: number;
  accountId: string;
  name: string;
  requests: number;
  questions: number;
  inputTokens: number;
  chargedMicro: bigint;
}

export interface ServerError {
  id: number;
  at: number;
  method: string;
  route: string;
  status: number;
  code: string | null;
  requestId: string | null;
}

/** A ledger entry with the API key it was made with, when one was recorded. */
export interface KeyedLedgerEntry extends LedgerEntry {
  key: { id: string; prefix: string; name: string | null } | null;
}

export interface LedgerFilter {
  kinds?: readonly LedgerKind[];
  limit: number;
  /** Only entries with a smaller id (newest first paging). */
  before?: number;
}

export interface ReportsRepository {
  /** Every account's judgments and top-ups by UTC day from `start` to `end`; days without any absent. */
  activityByDay(range: { start: number; end: number }): Promise<DayActivity[]>;
  /** The `limit` accounts with the most charged (ties: requests), or the most requests (ties: charged). */
  busiestAccounts(range: { start: number; end: number }, by: "charged" | "requests", limit: number): Promise<BusyAccount[]>;
  /** Judgments by account and UTC day (days without any absent), oldest day first; one account, or all. */
  usageByAccountDay(range: { start: number; end: number }, accountId?: string): Promise<AccountDay[]>;
  recordServerError(error: Omit<ServerError, "id" | "at">): Promise<void>;
  /** Newest first. */
  recentServerErrors(limit: number): Promise<ServerError[]>;
  serverErrorsByDay(range: { start: number; end: number }): Promise<{ day: number; errors: number }[]>;
  /** An account's entries, newest first, of the kinds asked (all when none), with their keys. */
  ledgerPage(accountId: string, filter: LedgerFilter): Promise<{ entries: KeyedLedgerEntry[]; nextBefore: number | null }>;
}
