import type { Command } from "commander";
import { auditEntryView, formatAuditEntries } from "../views/audit.js";
import { MAX_AUDIT_PAGE } from "../record-limits.js";
import { CliError, emit, requireAccount, withServices } from "./context.js";

/** `judge audit list`: who did what to which object, newest first. */
export function registerAuditCommands(program: Command): void {
  const audit = program.command("audit").description("The audit log of admin actions (CLI, admin API, console)");
  audit
    .command("list")
    .description("Admin actions, newest first")
    .option("--account <accountId>", "only the actions concerning this account (its own, its keys', its balance's)")
    .option("--limit <n>", `how many (1 to ${MAX_AUDIT_PAGE})`, "50")
    .action(async (options: { account?: string; limit: string }, command: Command) => {
      const limit = Number(options.limit);
      if (!/^\d+$/.test(options.limit) || limit < 1 || limit > MAX_AUDIT_PAGE) {
        throw new CliError(`--limit must be a whole number from 1 to ${MAX_AUDIT_PAGE}, got ${options.limit}`);
      }
      const { entries } = await withServices(command, async (services) => {
        const accountId = options.account === undefined ? undefined : (await requireAccount(services, options.account.trim())).account.id;
        return services.audit.page({ accountId, limit });
      });
      emit(command, { json: entries.map(auditEntryView), text: () => formatAuditEntries(entries) });
    });
}
