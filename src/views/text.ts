/** Plain text shared by the CLI's human-readable (non `--json`) output, the server's start-up messages and the tools' reports. */

/** Left-aligned columns separated by two spaces; trailing spaces trimmed so output diffs cleanly. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)));
  const render = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  return [render(headers), ...rows.map(render)].join("\n");
}

/** UTC, to the second: `2025-01-31 09:05:00Z`; "-" for a missing time. */
export function formatTimestamp(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "-";
  return new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d{3}Z$/, "Z");
}

/** "Invalid configuration:\n  A: x\n  B: y" → "Invalid configuration: A: x; B: y": a user error is one line. */
export function oneLine(message: string): string {
  return message
    .replace(/:\s*\n\s*/g, ": ")
    .replace(/\s*\n\s*/g, "; ")
    .trim();
}
