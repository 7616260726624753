import type { Command } from "commander";
import { adminTokenView, formatAdminTokens } from "../views/audit.js";
import { CliError, cliActor, emit, withServices } from "./context.js";
import { followUp } from "./follow-up.js";

/** `judge admins …`: named admin tokens for the admin API and the console, beside JUDGE_ADMIN_TOKEN. */
export function registerAdminsCommands(program: Command): void {
  const admins = program.command("admins").description("Named admin tokens for the admin API and the console (stored hashed, revocable)");

  admins
    .command("create")
    .description("Create a named admin token; it is printed once")
    .requiredOption("--name <name>", "whose token it is (unique among active tokens)")
    .action(async (options: { name: string }, command: Command) => {
      const { token, record } = await withServices(command, (services) => services.adminTokens.create({ name: options.name }, cliActor()));
      emit(command, {
        json: { ...adminTokenView(record), token },
        text: () =>
          [
            `Created admin token ${record.id} (${record.name}):`,
            "",
            `  ${token}`,
            "",
            "Store it now: it is shown only this once (only its hash is kept).",
            "It works wherever JUDGE_ADMIN_TOKEN does (the admin API, /metrics, the console) while the server has an admin token set.",
          ].join("\n"),
      });
    });

  admins
    .command("list")
    .description("List the named admin tokens (prefix only), revoked ones included")
    .action(async (_options: unknown, command: Command) => {
      const records = await withServices(command, (services) => services.adminTokens.list());
      emit(command, {
        json: records.map(adminTokenView),
        text: () => formatAdminTokens(records, followUp(command).line("Create one with:", "admins create --name <name>")),
      });
    });

  admins
    .command("revoke")
    .description("Revoke an admin token: its next request gets 404 like any unknown path")
    .argument("<idOrName>", "the token's id (adm_…) or the name of an active token")
    .action(async (idOrName: string, _options: unknown, command: Command) => {
      const record = await withServices(command, (services) => services.adminTokens.revoke(idOrName.trim(), cliActor()));
      if (!record) throw new CliError(`No admin token with id or active name ${idOrName.trim()}`);
      emit(command, { json: adminTokenView(record), text: () => `Revoked admin token ${record.id} (${record.name}).` });
    });
}
