import { formatEuros } from "../money/money.js";
import type { AccountDay, KeyedLedgerEntry } from "../services/types.js";

/**
 * CSV as RFC 4180 has it, for spreadsheets and scripts alike: a header row, CRLF line ends, a
 * field quoted (its quotes doubled) when it holds a comma, a quote or a line break. Free text that
 * people typed (names, notes) cannot start a formula: a leading = + - @ or tab gets a ' before it,
 * as spreadsheets expect (OWASP's "CSV injection"). Numbers are written exactly as given.
 *
 * A spreadsheet in a locale whose list separator is not the comma splits on `;` (or a tab, or
 * `|` when asked), so a note `paid;=cmd|…` would give it a cell that starts with `=` after the
 * guard at the field's start. A field holding any of those is quoted too: every spreadsheet
 * honours the quotes whatever it splits on, so no cell can start inside a field.
 */

export type CsvCell = string | number | bigint | null;

/** Marks a value as typed by a person: guarded against formula injection. */
export const text = (value: string | null): CsvCell => (value === null ? null : /^[=+\-@\t\r]/.test(value) ? `'${value}` : value);

const field = (value: CsvCell): string => {
  if (value === null) return "";
  const s = String(value);
  return /[",;\t|\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

export function csv(header: readonly string[], rows: Iterable<readonly CsvCell[]>): string {
  const lines = [header.map(field).join(",")];
  for (const row of rows) lines.push(row.map(field).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

const isoOrEmpty = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const LEDGER_CSV_HEADER = [
  "id",
  "at",
  "kind",
  "amount_micro",
  "amount_eur",
  "questions",
  "input_tokens",
  "period_start",
  "request_id",
  "key_id",
  "key_prefix",
  "key_name",
  "note",
];

/** Ledger entries (with their keys) as CSV rows: what GET …/ledger.csv and `judge ledger export` write. */
export const ledgerCsvRow = (e: KeyedLedgerEntry): CsvCell[] => [
  e.id,
  isoOrEmpty(e.at),
  e.kind,
  e.amountMicro,
  formatEuros(e.amountMicro),
  e.questions,
  e.inputTokens,
  isoOrEmpty(e.periodStart),
  e.requestId,
  e.key?.id ?? e.keyId,
  e.key?.prefix ?? null,
  text(e.key?.name ?? null),
  text(e.note),
];

export const USAGE_CSV_HEADER = ["date", "account_id", "account_name", "requests", "questions", "input_tokens", "charged_micro", "charged_eur"];

/** One account's judgments of one UTC day as a CSV row: what GET /admin/v1/usage.csv and `judge ledger usage` write. */
export const usageCsvRow = (u: AccountDay): CsvCell[] => [
  new Date(u.day).toISOString().slice(0, 10),
  u.accountId,
  text(u.name),
  u.requests,
  u.questions,
  u.inputTokens,
  u.chargedMicro,
  formatEuros(u.chargedMicro),
];
