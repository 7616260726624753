import type { Command } from "commander";
import { MAX_MICROS } from "../money/money.js";
import type { ApiKeyRecord, KeyChanges } from "../services/types.js";
import { PLAN_LIMITS } from "../record-limits.js";
import { CliError, cliActor, emit, globalOptions, ioOf, withServices } from "./context.js";
import { followUp } from "./follow-up.js";
import { parseEurosOption, parseWholeNumber } from "./options.js";
import { INSTANT_FORMAT, parseInstant } from "../views/instants.js";
import { formatMoney } from "../views/money.js";
import { formatTable, formatTimestamp } from "../views/text.js";

export const SHOWN_ONCE_NOTICE = "This key is shown once, store it now: only its hash is kept, so it cannot be displayed again.";

const status = (record: ApiKeyRecord, now: number) =>
  record.revokedAt !== null ? "revoked" : record.limits.expiresAt !== null && record.limits.expiresAt <= now ? "expired" : "active";

/** "€1.20 of €5.00" with a budget, else what was spent; "+ €0.01 held" while requests are in flight. */
export function formatSpend(record: ApiKeyRecord): string {
  const spent = formatMoney(record.spentMicro);
  const of = record.limits.budgetMicro === null ? spent : `${spent} of ${formatMoney(record.limits.budgetMicro)}`;
  return record.heldMicro > 0 ? `${of} (+${formatMoney(record.heldMicro)} held)` : of;
}

/** Lists key metadata only; there is no plaintext key to show, by design. */
export function formatKeys(records: readonly ApiKeyRecord[], now = Date.now()): string {
  if (records.length === 0) return "No API keys.";
  return formatTable(
    ["ID", "PREFIX", "ACCOUNT", "NAME", "STATUS", "SPENT", "RPM", "EXPIRES", "CREATED", "LAST USED"],
    records.map((record) => [
      record.id,
      record.prefix,
      record.accountId,
      record.name ?? "-",
      status(record, now),
      formatSpend(record),
      record.limits.requestsPerMinute === null ? "plan" : String(record.limits.requestsPerMinute),
      record.limits.expiresAt === null ? "never" : formatTimestamp(record.limits.expiresAt),
      formatTimestamp(record.createdAt),
      formatTimestamp(record.lastUsedAt),
    ]),
  );
}

/** One line of a key's limits, for messages: "limits: 30 requests/min, budget €5.00, expires 2026-12-31 00:00:00Z". */
export function formatKeyLimits(record: ApiKeyRecord): string {
  const { requestsPerMinute, budgetMicro, expiresAt } = record.limits;
  const parts = [
    requestsPerMinute === null ? "the plan's rate limit only" : `${requestsPerMinute} requests/min (on top of the plan's)`,
    budgetMicro === null ? "no budget" : `budget ${formatMoney(budgetMicro)}`,
    expiresAt === null ? "never expires" : `expires ${formatTimestamp(expiresAt)}`,
  ];
  return `limits: ${parts.join(", ")}`;
}

interface LimitOptions {
  rpm?: string;
  budget?: string;
  expires?: string;
}

/** The limit flags as changes, each checked before the store opens; "none" (or "never") clears one. */
function limitChanges(options: LimitOptions, clearable: boolean): KeyChanges {
  const cleared = (text: string) => clearable && /^(none|never)$/i.test(text.trim());
  const changes: KeyChanges = {};
  if (options.rpm !== undefined) {
    changes.requestsPerMinute = cleared(options.rpm) ? null : parseWholeNumber(options.rpm, "--rpm", { min: 1, max: PLAN_LIMITS.requestsPerMinute });
  }
  if (options.budget !== undefined) {
    changes.budgetMicro = cleared(options.budget) ? null : parseEurosOption(options.budget, "--budget", { minMicro: 0, maxMicro: MAX_MICROS, example: "5.00" });
  }
  if (options.expires !== undefined) {
    const at = cleared(options.expires) ? null : parseInstant(options.expires);
    if (at === undefined) throw new CliError(`--expires must be ${INSTANT_FORMAT}; got ${JSON.stringify(options.expires)}`);
    changes.expiresAt = at;
  }
  return changes;
}

export function formatKeyCreated(created: { key: string; record: ApiKeyRecord }): string {
  const { key, record } = created;
  return [
    `Created API key ${record.id} (${record.prefix}) for account ${record.accountId}.`,
    formatKeyLimits(record),
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
    .option("--rpm <n>", "the key's own requests per minute, on top of the plan's limit")
    .option("--budget <euros>", "the most the key may ever charge to the balance, e.g. 5.00 (402 once reached)")
    .option("--expires <when>", "expiry, in the future: 2026-12-31 (midnight UTC) or 2026-12-31T18:00:00Z (401 after it)")
    .action(async (options: { account: string; name?: string } & LimitOptions, command: Command) => {
      const { name: _none, ...limits } = limitChanges(options, false);
      const created = await withServices(command, (services) =>
        services.keys.create({ accountId: options.account, name: options.name, ...limits }, cliActor()),
      );
      emit(command, { json: created, text: () => formatKeyCreated(created) });
      // Under --json stdout is for machines; the reminder still reaches the person running it.
      if (globalOptions(command).json) ioOf(command).stderr.write(`${SHOWN_ONCE_NOTICE}\n`);
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
    .command("rename")
    .description("Rename an API key, by its id (key_…) or displayed prefix (tjs_…)")
    .argument("<idOrPrefix>", "key id or the prefix shown by `judge keys list`")
    .argument("<name>", "the new label")
    .action(async (idOrPrefix: string, name: string, _options: unknown, command: Command) => {
      const record = await updated(command, idOrPrefix, { name });
      emit(command, { json: record, text: () => `Renamed API key ${record.id} (${record.prefix}) to ${JSON.stringify(record.name)}.` });
    });

  keys
    .command("update")
    .description("Change or clear an API key's limits (none/never clears one); applies to its next request")
    .argument("<idOrPrefix>", "key id or the prefix shown by `judge keys list`")
    .option("--rpm <n|none>", "the key's own requests per minute, or none")
    .option("--budget <euros|none>", "the key's lifetime budget, e.g. 5.00, or none")
    .option("--expires <when|never>", "expiry (2026-12-31 or 2026-12-31T18:00:00Z), or never")
    .action(async (idOrPrefix: string, options: LimitOptions, command: Command) => {
      const changes = limitChanges(options, true);
      if (Object.keys(changes).length === 0) throw new CliError("nothing to change: give --rpm, --budget or --expires");
      const record = await updated(command, idOrPrefix, changes);
      emit(command, { json: record, text: () => `Updated API key ${record.id} (${record.prefix}): ${formatKeyLimits(record)}; spent ${formatSpend(record)}.` });
    });

  keys
    .command("revoke")
    .description("Revoke an API key by its id (key_…) or displayed prefix (tjs_…)")
    .argument("<idOrPrefix>", "key id or the prefix shown by `judge keys list`")
    .action(async (idOrPrefix: string, _options: unknown, command: Command) => {
      const startedAt = Date.now();
      const record = await withServices(command, (services) => services.keys.revoke(idOrPrefix.trim(), cliActor()));
      if (!record) throw noSuchKey(command, idOrPrefix);
      emit(command, { json: record, text: () => formatKeyRevoked(record, startedAt) });
    });
}

async function updated(command: Command, idOrPrefix: string, changes: KeyChanges): Promise<ApiKeyRecord> {
  const record = await withServices(command, (services) => services.keys.update(idOrPrefix.trim(), changes, cliActor()));
  if (!record) throw noSuchKey(command, idOrPrefix);
  return record;
}

function noSuchKey(command: Command, idOrPrefix: string): CliError {
  const list = followUp(command).command("keys list");
  // An in-memory database was created empty for this command: there is nothing to list.
  return new CliError(
    `No API key matches ${JSON.stringify(idOrPrefix)}${list ? `; see \`${list}\` for ids and prefixes` : " (the database is in memory and empty)"}`,
  );
}
