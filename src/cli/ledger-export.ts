import type { Command } from "commander";
import type { LedgerKind } from "../services/types.js";
import { LEDGER_KINDS, MAX_LEDGER_PAGE } from "../record-limits.js";
import { csv, LEDGER_CSV_HEADER, ledgerCsvRow, USAGE_CSV_HEADER, usageCsvRow } from "../views/csv.js";
import { CliError, ioOf, requireAccount, withServices } from "./context.js";
import { parseWholeNumber } from "./options.js";
import { DAY_MS } from "../money/periods.js";

/** `judge ledger export` and `judge ledger usage`: the admin API's two CSV exports, on stdout. */

function parseKinds(text: string | undefined): LedgerKind[] | undefined {
  if (text === undefined) return undefined;
  const kinds = text.split(",").map((kind) => kind.trim());
  const unknown = kinds.find((kind) => !(LEDGER_KINDS as readonly string[]).includes(kind));
  if (unknown !== undefined)
    throw new CliError(`--kind: unknown kind ${JSON.stringify(unknown)}: use ${LEDGER_KINDS.join(", ")}, or several separated by commas`);
  return kinds as LedgerKind[];
}

export function registerLedgerExports(ledger: Command): void {
  ledger
    .command("export")
    .description("Print an account's whole ledger as CSV, newest first (the columns of GET /admin/v1/accounts/{id}/ledger.csv)")
    .requiredOption("--account <accountId>", "account whose ledger to export")
    .option("--kind <kinds>", `only these kinds, separated by commas: ${LEDGER_KINDS.join(", ")}`)
    .action(async (options: { account: string; kind?: string }, command: Command) => {
      const kinds = parseKinds(options.kind);
      const rows = await withServices(command, async (services) => {
        await requireAccount(services, options.account);
        const all = [];
        for (let before: number | undefined; ; ) {
          const page = await services.reports.ledgerPage(options.account, { limit: MAX_LEDGER_PAGE, before, kinds });
          all.push(...page.entries.map(ledgerCsvRow));
          if (page.nextBefore === null) return all;
          before = page.nextBefore;
        }
      });
      ioOf(command).stdout.write(csv(LEDGER_CSV_HEADER, rows));
    });

  ledger
    .command("usage")
    .description("Print judgments per account and UTC day as CSV (the columns of GET /admin/v1/usage.csv)")
    .option("--account <accountId>", "only this account (every account when absent)")
    .option("--days <n>", "how many UTC days, ending today (1 to 366)", "30")
    .action(async (options: { account?: string; days: string }, command: Command) => {
      const days = parseWholeNumber(options.days, "--days", { min: 1, max: 366 });
      const rows = await withServices(command, async (services) => {
        if (options.account !== undefined) await requireAccount(services, options.account);
        const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
        return services.reports.usageByAccountDay({ start: today - (days - 1) * DAY_MS, end: today + DAY_MS }, options.account);
      });
      ioOf(command).stdout.write(csv(USAGE_CSV_HEADER, rows.map(usageCsvRow)));
    });
}
