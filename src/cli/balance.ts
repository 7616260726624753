import type { Command } from "commander";
import { formatEuros, MAX_MICROS } from "../money/money.js";
import { ledgerEntryView } from "../views/admin.js";
import { cliActor, emit, requireAccount, withServices } from "./context.js";
import { parseEurosOption } from "./options.js";
import { formatMoney } from "../views/money.js";
import type { LedgerEntry } from "../services/types.js";

export function registerBalanceCommands(program: Command): void {
  const balance = program.command("balance").description("Manage prepaid balances");

  balance
    .command("top-up")
    .description("Credit an account's prepaid balance (recorded as a ledger entry)")
    .requiredOption("--account <accountId>", "account to credit")
    .requiredOption("--amount <euros>", "euros to add, up to 6 decimals, e.g. 12.50")
    .option("--note <text>", "why, e.g. an invoice number (kept in the ledger)")
    .action(async (options: { account: string; amount: string; note?: string }, command: Command) => {
      // Parsed before the store opens, so a refused amount writes nothing at all.
      const amountMicro = parseEurosOption(options.amount, "--amount", {
        minMicro: 1,
        maxMicro: MAX_MICROS,
        example: "12.50",
      });
      const result = await withServices(command, async (services) => {
        const { account } = await requireAccount(services, options.account);
        return { account, ...(await services.accounts.topUp(account.id, amountMicro, options.note, cliActor())) };
      });
      emitEntry(command, result, `Topped up ${result.account.id} (${result.account.name}) by ${formatMoney(amountMicro)}`);
    });

  balance
    .command("adjust")
    .description("Correct an account's balance up or down, as its own ledger entry (history is never rewritten)")
    .requiredOption("--account <accountId>", "account to correct")
    .requiredOption("--amount <euros>", "euros to add (positive) or take (negative), up to 6 decimals, e.g. -1.50")
    .requiredOption("--note <text>", 'why, e.g. "reverses the mistaken top-up of 3 May" (kept in the ledger)')
    .action(async (options: { account: string; amount: string; note: string }, command: Command) => {
      const negative = options.amount.trim().startsWith("-");
      const magnitude = parseEurosOption(negative ? options.amount.trim().slice(1) : options.amount, "--amount", {
        minMicro: 1,
        maxMicro: MAX_MICROS,
        example: "-1.50",
      });
      const amountMicro = negative ? -magnitude : magnitude;
      const result = await withServices(command, async (services) => {
        const { account } = await requireAccount(services, options.account);
        return { account, ...(await services.accounts.adjust(account.id, amountMicro, options.note, cliActor())) };
      });
      emitEntry(command, result, `Adjusted ${result.account.id} (${result.account.name}) by ${negative ? "-" : "+"}${formatMoney(magnitude)}`);
    });
}

/** Same shape as the admin API's POST /admin/v1/accounts/{id}/top-ups. */
function emitEntry(command: Command, result: { entry: LedgerEntry; balanceMicro: number }, what: string): void {
  emit(command, {
    json: {
      entry: ledgerEntryView(result.entry),
      balance_micro: result.balanceMicro,
      balance: formatEuros(result.balanceMicro),
    },
    text: () => `${what}; balance is now ${formatMoney(result.balanceMicro)} (ledger entry ${result.entry.id}).`,
  });
}
