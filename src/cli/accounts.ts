import type { Command } from "commander";
import type { Account } from "../store/store.js";
import { emit, withStore } from "./context.js";
import { formatTable, formatTimestamp } from "./format.js";

export function formatAccounts(accounts: readonly Account[]): string {
  if (accounts.length === 0) {
    return "No accounts yet. Create one with: judge accounts create --name <name>";
  }
  return formatTable(
    ["ID", "NAME", "CREATED"],
    accounts.map((account) => [account.id, account.name, formatTimestamp(account.createdAt)]),
  );
}

export function formatAccountCreated(account: Account): string {
  return [
    `Created account ${account.id} (${account.name}).`,
    `Create an API key for it with: judge keys create --account ${account.id}`,
  ].join("\n");
}

export function registerAccountsCommands(program: Command): void {
  const accounts = program.command("accounts").description("Manage accounts");

  accounts
    .command("create")
    .description("Create an account")
    .requiredOption("--name <name>", "display name of the account")
    .action(async (options: { name: string }, command: Command) => {
      const account = await withStore(command, (store) => store.accounts.create({ name: options.name }));
      emit(command, { json: account, text: () => formatAccountCreated(account) });
    });

  accounts
    .command("list")
    .description("List accounts")
    .action(async (_options: unknown, command: Command) => {
      const list = await withStore(command, (store) => store.accounts.list());
      emit(command, { json: list, text: () => formatAccounts(list) });
    });
}
