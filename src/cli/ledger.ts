import type { Command } from "commander";
import { ledgerCheckView, ledgerEntryView } from "../views/admin.js";
import { MAX_LEDGER_PAGE } from "../record-limits.js";
import type { LedgerEntry } from "../services/types.js";
import type { LedgerCheck } from "../services/types.js";
import { CliError, emit, requireAccount, withServices } from "./context.js";
import { formatTable, formatTimestamp } from "../views/text.js";
import { registerLedgerExports } from "./ledger-export.js";
import { parseWholeNumber } from "./options.js";
import { formatMoney, formatSignedMoney } from "../views/money.js";

export function formatLedgerEntries(entries: readonly LedgerEntry[]): string {
  if (entries.length === 0) return "No ledger entries.";
  return formatTable(
    ["ID", "AT", "KIND", "AMOUNT", "QUESTIONS", "TOKENS", "DETAIL"],
    entries.map((entry) => [
      String(entry.id),
      formatTimestamp(entry.at),
      entry.kind,
      formatSignedMoney(entry.amountMicro),
      String(entry.questions),
      String(entry.inputTokens),
      entry.note ?? entry.requestId ?? "",
    ]),
  );
}

const accountsChecked = (check: LedgerCheck) => `${check.accounts} account${check.accounts === 1 ? "" : "s"} checked`;

export function formatLedgerCheck(check: LedgerCheck): string {
  if (check.ok) {
    return `OK: ${accountsChecked(check)}; every balance, hold and period usage equals the sum of its entries.`;
  }
  const show = (unit: string, value: number) => (unit === "micro_eur" ? formatMoney(value) : String(value));
  return [
    `FAILED: ${check.mismatches.length} mismatch(es), ${accountsChecked(check)}:`,
    ...check.mismatches.map((m) => `  ${m.accountId} ${m.what}: stored ${show(m.unit, m.column)}, ledger says ${show(m.unit, m.ledgerSum)}`),
  ].join("\n");
}

export function parseLimit(text: string): number {
  return parseWholeNumber(text, "--limit", { min: 1, max: MAX_LEDGER_PAGE });
}

export function registerLedgerCommands(program: Command): void {
  const ledger = program.command("ledger").description("Read and verify the append-only ledger of balance movements");

  ledger
    .command("list")
    .description("List an account's ledger entries, newest first")
    .requiredOption("--account <accountId>", "account whose entries to list")
    .option("--limit <n>", `number of entries (1 to ${MAX_LEDGER_PAGE})`, "50")
    .action(async (options: { account: string; limit: string }, command: Command) => {
      const limit = parseLimit(options.limit);
      const entries = await withServices(command, async (services) => {
        await requireAccount(services, options.account);
        return services.accounts.entries(options.account, { limit });
      });
      emit(command, { json: entries.map(ledgerEntryView), text: () => formatLedgerEntries(entries) });
    });

  ledger
    .command("check")
    .description("Check that every balance, hold and period usage equals the sum of its ledger entries")
    .action(async (_options: unknown, command: Command) => {
      const check = await withServices(command, (services) => services.ledger.check());
      emit(command, {
        json: ledgerCheckView(check),
        text: () => formatLedgerCheck(check),
      });
      if (!check.ok) {
        const accounts = new Set(check.mismatches.map((m) => m.accountId));
        throw new CliError(`ledger check failed for ${[...accounts].join(", ")}`);
      }
    });
  registerLedgerExports(ledger);
}
