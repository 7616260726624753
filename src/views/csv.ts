/**
 * CSV as RFC 4180 has it, for spreadsheets and scripts alike: a header row, CRLF line ends, a
 * field quoted (its quotes doubled) when it holds a comma, a quote or a line break. Free text that
 * people typed (names, notes) cannot start a formula: a leading = + - @ or tab gets a ' before it,
 * as spreadsheets expect (OWASP's "CSV injection"). Numbers are written exactly as given.
 */

export type CsvCell = string | number | bigint | null;

/** Marks a value as typed by a person: guarded against formula injection. */
export const text = (value: string | null): CsvCell => (value === null ? null : /^[=+\-@\t\r]/.test(value) ? `'${value}` : value);

const field = (value: CsvCell): string => {
  if (value === null) return "";
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

export function csv(header: readonly string[], rows: Iterable<readonly CsvCell[]>): string {
  const lines = [header.map(field).join(",")];
  for (const row of rows) lines.push(row.map(field).join(","));
  return `${lines.join("\r\n")}\r\n`;
}
