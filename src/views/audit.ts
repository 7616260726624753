import { z } from "@hono/zod-openapi";
import type { AdminTokenRecord, AuditEntry } from "../services/types.js";
import { formatMoney } from "./money.js";
import { formatTable, formatTimestamp } from "./text.js";

/** The audit log and the admin tokens, as the admin API answers and `judge … --json` prints them. */

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));
const Time = z.string().openapi({ description: "ISO 8601, UTC.", example: "2026-01-31T10:00:00.000Z" });

export const AuditEntryView = z
  .object({
    id: z.number().int(),
    at: Time,
    actor: z
      .string()
      .openapi({ description: "Who: `env-token` (JUDGE_ADMIN_TOKEN), `token:<name>` (a named admin token) or `cli:<OS user>`.", example: "token:alice" }),
    actor_token_id: z.string().nullable().openapi({ description: "The named admin token's id (adm_…), when one was used." }),
    action: z.string().openapi({ example: "account.disable" }),
    object: z.object({ kind: z.enum(["account", "key", "plan", "admin_token"]), id: z.string() }),
    account_id: z.string().nullable().openapi({ description: "The account the action concerns, if any." }),
    details: z.record(z.string(), z.unknown()).openapi({ description: "What changed (from/to, amounts, names); never a key or token." }),
  })
  .openapi("AdminAuditEntry");

export function auditEntryView(entry: AuditEntry): z.infer<typeof AuditEntryView> {
  return {
    id: entry.id,
    at: iso(entry.at),
    actor: entry.actor,
    actor_token_id: entry.actorTokenId,
    action: entry.action,
    object: { kind: entry.objectKind, id: entry.objectId },
    account_id: entry.accountId,
    details: entry.details,
  };
}

export const AdminTokenView = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().openapi({ description: "The first characters of the token; the token itself is never stored." }),
    created_at: Time,
    last_used_at: Time.nullable().openapi({ description: "To the minute." }),
    revoked_at: Time.nullable(),
  })
  .openapi("AdminToken");

export function adminTokenView(record: AdminTokenRecord): z.infer<typeof AdminTokenView> {
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    created_at: iso(record.createdAt),
    last_used_at: isoOrNull(record.lastUsedAt),
    revoked_at: isoOrNull(record.revokedAt),
  };
}

/**
 * What each kind of field holds, by its name as the store records it (snake_case from rows,
 * camelCase from a key's limits). The console's audit log (src/console/audit.js) reads the same
 * names the same way, so the CLI and the console describe one entry alike.
 */
const MICROS = /(_micro|Micro)$/;
const EPOCH_MS = /(_at|At)$/;
const PER_MILLION = "price_per_million";
/** A key's limits: null is "no limit of its own" (store KeyLimits), which `null` would not say. */
const LIMIT = /^(requests_per_minute|requestsPerMinute|budget_micro|budgetMicro|expires_at|expiresAt)$/;
/** Ids and entry numbers are names, not quantities: no thousands separators. */
const IDENTIFIER = /(^|_)(id|entry)$/;
const LABELS: Record<string, string> = { [PER_MILLION]: "price per million tokens" };

/** "budget_micro" → "budget", "requestsPerMinute" → "requests per minute", "expires_at" → "expires". */
const label = (field: string) =>
  LABELS[field] ??
  field
    .replace(MICROS, "")
    .replace(EPOCH_MS, "")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replaceAll("_", " ")
    .toLowerCase();

/** `2099-12-31 00:00 UTC`: the console's way of writing an instant. */
const minuteUtc = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;

/** One recorded value in words: amounts as exact euros, instants as UTC times, counts with separators, text quoted. */
function shown(field: string, value: unknown): string {
  if (value === null && (LIMIT.test(field) || MICROS.test(field) || EPOCH_MS.test(field))) return "none";
  // Only whole numbers are what the store records; anything else is shown as it is rather than refused.
  if (typeof value === "number" && Number.isSafeInteger(value)) {
    if (MICROS.test(field) || field === PER_MILLION) return formatMoney(value);
    if (EPOCH_MS.test(field)) return minuteUtc(value);
    if (!IDENTIFIER.test(field)) return value.toLocaleString("en-US");
  }
  return JSON.stringify(value);
}

/**
 * `details` in one line for the CLI's table: `field: from → to` for changes, `field: value`
 * otherwise. The text is for people; `--json` keeps the recorded micro-euros and epoch milliseconds.
 */
export function describeDetails(details: Record<string, unknown>): string {
  return Object.entries(details)
    .map(([field, value]) => {
      if (value && typeof value === "object" && "from" in value && "to" in value) {
        const change = value as { from: unknown; to: unknown };
        return `${label(field)}: ${shown(field, change.from)} → ${shown(field, change.to)}`;
      }
      return `${label(field)}: ${shown(field, value)}`;
    })
    .join(", ");
}

export function formatAuditEntries(entries: readonly AuditEntry[]): string {
  if (entries.length === 0) return "No admin actions recorded.";
  return formatTable(
    ["ID", "AT", "ACTOR", "ACTION", "OBJECT", "DETAILS"],
    entries.map((entry) => [String(entry.id), formatTimestamp(entry.at), entry.actor, entry.action, entry.objectId, describeDetails(entry.details)]),
  );
}

/** `createHint`: how to create one, as a command the reader can copy (the CLI's follow-up.ts). */
export function formatAdminTokens(records: readonly AdminTokenRecord[], createHint = "Create one with: npx judge admins create --name <name>"): string {
  if (records.length === 0) return `No admin tokens. ${createHint}`;
  return formatTable(
    ["ID", "NAME", "PREFIX", "CREATED", "LAST USED", "STATUS"],
    records.map((record) => [
      record.id,
      record.name,
      record.prefix,
      formatTimestamp(record.createdAt),
      record.lastUsedAt === null ? "never" : formatTimestamp(record.lastUsedAt),
      record.revokedAt === null ? "active" : `revoked ${formatTimestamp(record.revokedAt)}`,
    ]),
  );
}
