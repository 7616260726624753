import type { Command } from "commander";
import { accountView, ledgerEntryView, planView } from "../views/admin.js";
import type { AccountSummary } from "../services/accounts.js";
import type { LedgerEntry } from "../services/types.js";
import { cliActor, emit, requireAccount, withServices } from "./context.js";
import { followUp, followUpFor, type FollowUp } from "./follow-up.js";
import { formatTable, formatTimestamp } from "../views/text.js";
import { formatLedgerEntries, parseLimit } from "./ledger.js";
import { describePlan } from "./plans.js";
import { formatMoney, isoTime } from "../views/money.js";

const summaryJson = ({ account, plan, usage }: AccountSummary) => accountView(account, plan, usage);

/** `next` writes the commands to run next (follow-up.ts); by default on the default database. */
export function formatAccounts(summaries: readonly AccountSummary[], next: FollowUp = followUpFor("data/judge.db", false)): string {
  if (summaries.length === 0) return `No accounts yet. ${next.line("Create one with:", "accounts create --name <name>")}`;
  return formatTable(
    ["ID", "NAME", "STATUS", "PLAN", "BALANCE", "USED/ALLOWANCE", "CREATED"],
    summaries.map(({ account, plan, usage }) => [
      account.id,
      account.name,
      accountStatus(account),
      plan.name,
      formatMoney(account.balanceMicro),
      `${usage.used}/${usage.allowance}`,
      formatTimestamp(account.createdAt),
    ]),
  );
}

const accountStatus = (account: AccountSummary["account"]) => (account.disabledAt === null ? "active" : "disabled");

export function formatAccountCreated({ account, plan }: AccountSummary, next: FollowUp): string {
  return [
    `Created account ${account.id} (${account.name}) on plan ${plan.name}.`,
    next.line("Create an API key for it with:", `keys create --account ${account.id}`),
  ].join("\n");
}

export function formatAccountDetails({ account, plan, usage }: AccountSummary, entries: readonly LedgerEntry[]): string {
  return [
    `Account   ${account.id} (${account.name}), created ${formatTimestamp(account.createdAt)}`,
    `Status    ${account.disabledAt === null ? "active" : `disabled since ${formatTimestamp(account.disabledAt)}: its keys get 401 account_disabled`}`,
    `Plan      ${plan.name} (${plan.id}): ${describePlan(plan)}`,
    `Period    [${isoTime(usage.period.start)}, ${isoTime(usage.period.end)})`,
    `Questions ${usage.used} used, ${usage.reserved} reserved, of ${usage.allowance} allowed`,
    `Balance   ${formatMoney(account.balanceMicro)}, of which ${formatMoney(account.reservedMicro)} held by requests in flight`,
    "",
    "Recent ledger entries (newest first):",
    formatLedgerEntries(entries),
  ].join("\n");
}

export function registerAccountsCommands(program: Command): void {
  const accounts = program.command("accounts").description("Manage accounts: their plan, balance and usage");

  accounts
    .command("create")
    .description("Create an account")
    .requiredOption("--name <name>", "display name of the account")
    .option("--plan <idOrName>", "plan id or name (default: the plan named default)")
    .action(async (options: { name: string; plan?: string }, command: Command) => {
      const summary = await withServices(command, (services) => services.accounts.create({ name: options.name, plan: options.plan?.trim() }, cliActor()));
      emit(command, { json: summaryJson(summary), text: () => formatAccountCreated(summary, followUp(command)) });
    });

  accounts
    .command("list")
    .description("List accounts with their plan, balance and usage this period")
    .action(async (_options: unknown, command: Command) => {
      const list = await withServices(command, (services) => services.accounts.list());
      emit(command, { json: list.map(summaryJson), text: () => formatAccounts(list, followUp(command)) });
    });

  accounts
    .command("show")
    .description("Show an account: plan, current period, usage, balance and recent ledger entries")
    .argument("<accountId>", "account id (acct_…)")
    .option("--limit <n>", "number of recent ledger entries", "10")
    .action(async (accountId: string, options: { limit: string }, command: Command) => {
      const limit = parseLimit(options.limit);
      const { summary, entries } = await withServices(command, async (services) => {
        const summary = await requireAccount(services, accountId.trim());
        return { summary, entries: await services.accounts.entries(summary.account.id, { limit }) };
      });
      emit(command, {
        // Same shape as the admin API's GET /admin/v1/accounts/{id}, without the keys.
        json: { account: summaryJson(summary), plan: planView(summary.plan), ledger: entries.map(ledgerEntryView) },
        text: () => formatAccountDetails(summary, entries),
      });
    });

  accounts
    .command("set-plan")
    .description("Move an account to another plan; it applies from the account's next request")
    .argument("<accountId>", "account id (acct_…)")
    .argument("<plan>", "plan id or name")
    .action(async (accountId: string, plan: string, _options: unknown, command: Command) => {
      const summary = await withServices(command, (services) => services.accounts.setPlan(accountId.trim(), plan.trim(), cliActor()));
      const { account } = summary;
      emit(command, {
        json: summaryJson(summary),
        text: () => `Account ${account.id} (${account.name}) is now on plan ${summary.plan.name}.`,
      });
    });

  accounts
    .command("rename")
    .description("Rename an account")
    .argument("<accountId>", "account id (acct_…)")
    .requiredOption("--name <name>", "the new display name")
    .action(async (accountId: string, options: { name: string }, command: Command) => {
      const summary = await withServices(command, (services) => services.accounts.rename(accountId.trim(), options.name, cliActor()));
      emit(command, { json: summaryJson(summary), text: () => `Account ${summary.account.id} is now named ${summary.account.name}.` });
    });

  for (const verb of ["disable", "enable"] as const) {
    accounts
      .command(verb)
      .description(
        verb === "disable"
          ? "Disable an account: its keys get 401 account_disabled from their next request, on every instance; nothing is deleted"
          : "Enable a disabled account: its keys (those not revoked) work again",
      )
      .argument("<accountId>", "account id (acct_…)")
      .action(async (accountId: string, _options: unknown, command: Command) => {
        const summary = await withServices(command, (services) => services.accounts.setDisabled(accountId.trim(), verb === "disable", cliActor()));
        const { account } = summary;
        emit(command, {
          json: summaryJson(summary),
          text: () => `Account ${account.id} (${account.name}) is ${accountStatus(account) === "active" ? "enabled" : "disabled"}.`,
        });
      });
  }
}
