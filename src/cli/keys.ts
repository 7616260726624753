import type { Command } from "commander";
import type { ApiKeyRecord } from "../services/types.js";
import { CliError, cliActor, emit, globalOptions, withServices } from "./context.js";
import { formatTable, formatTimestamp } from "../views/text.js";

export const SHOWN_ONCE_NOTICE =
  "This key is shown once, store it now: only its hash is kept, so it cannot be displayed again.";

/** Lists key metadata only; there is no plaintext key to show, by design. */
export function formatKeys(records: readonly ApiKeyRecord[]): string {
  if (records.length === 0) return "No API keys.";
  return formatTable(
    ["ID", "PREFIX", "ACCOUNT", "NAME", "STATUS", "CREATED", "LAST USED"],
    records.map((record) => [
      record.id,
      record.prefix,
      record.accountId,
      record.name ?? "-",
      record.revokedAt === null ? "active" : "revoked",
      formatTimestamp(record.createdAt),
      formatTimestamp(record.lastUsedAt),
    ]),
  );
}

export function formatKeyCreated(created: { key: string; record: ApiKeyRecord }): string {
  const { key, record } = created;
  return [
    `Created API key ${record.id} (${record.prefix}) for account ${record.accountId}.`,
    "",
    `    ${key}`,
    "",
    SHOWN_ONCE_NOTICE,
    "Send it as the header:  Authorization: Bearer <key>",
  ].join("\n");
}

/** `revokedBefore` tells a fresh revocation from a key that was already revoked earlier. */
export function formatKeyRevoked(record: ApiKeyRecord, revokedBefore: number): string {
  const when = formatTimestamp(record.revokedAt);
  return record.revokedAt !== null && record.revokedAt < revokedBefore
    ? `API key ${record.id} (${record.prefix}) was already revoked at ${when}.`
    : `Revoked API key ${record.id} (${record.prefix}) at ${when}; requests using it are now rejected.`;
}

export function registerKeysCommands(program: Command): void {
  const keys = program.command("keys").description("Manage API keys");

  keys
    .command("create")
    .description("Create an API key for an account; the key is printed once")
    .requiredOption("--account <accountId>", "account that will own the key")
    .option("--name <name>", "label to recognise the key by, e.g. where it is used")
    .action(async (options: { account: string; name?: string }, command: Command) => {
      const created = await withServices(command, (services) =>
        services.keys.create({ accountId: options.account, name: options.name }, cliActor()),
      );
      emit(command, { json: created, text: () => formatKeyCreated(created) });
      // Under --json stdout is for machines; the reminder still reaches the person running it.
      if (globalOptions(command).json) process.stderr.write(`${SHOWN_ONCE_NOTICE}\n`);
    });

  keys
    .command("list")
    .description("List API keys (metadata only; keys themselves are never stored)")
    .option("--account <accountId>", "only keys of this account")
    .action(async (options: { account?: string }, command: Command) => {
      const records = await withServices(command, async (services) => {
        // A mistyped id should not look like an account without keys.
        if (options.account !== undefined && !(await services.accounts.summary(options.account))) {
          throw new CliError(`No account with id ${options.account}`);
        }
        return services.keys.list({ accountId: options.account });
      });
      emit(command, { json: records, text: () => formatKeys(records) });
    });

  keys
    .command("revoke")
    .description("Revoke an API key by its id (key_…) or displayed prefix (tjs_…)")
    .argument("<idOrPrefix>", "key id or the prefix shown by `judge keys list`")
    .action(async (idOrPrefix: string, _options: unknown, command: Command) => {
      const startedAt = Date.now();
      const record = await withServices(command, (services) => services.keys.revoke(idOrPrefix.trim(), cliActor()));
      if (!record) {
        throw new CliError(
          `No API key matches ${JSON.stringify(idOrPrefix)}; see \`judge keys list\` for ids and prefixes`,
        );
      }
      emit(command, { json: record, text: () => formatKeyRevoked(record, startedAt) });
    });
}
