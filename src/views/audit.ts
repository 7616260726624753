import { z } from "@hono/zod-openapi";
import type { AdminTokenRecord, AuditEntry } from "../services/types.js";
import { formatTable, formatTimestamp } from "./text.js";

/** The audit log and the admin tokens, as the admin API answers and `judge … --json` prints them. */

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));
const Time = z.string().openapi({ description: "ISO 8601, UTC.", example: "2026-01-31T10:00:00.000Z" });

export const AuditEntryView = z
  .object({
    id: z.number().int(),
    at: Time,
    actor: z.string().openapi({ description: "Who: `env-token` (JUDGE_ADMIN_TOKEN), `token:<name>` (a named admin token) or `cli:<OS user>`.", example: "token:alice" }),
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

/** `details` in one line: `from → to` pairs and fields, for the CLI's table. */
export function describeDetails(details: Record<string, unknown>): string {
  return Object.entries(details)
    .map(([field, value]) => {
      if (value && typeof value === "object" && "from" in value && "to" in value) {
        const change = value as { from: unknown; to: unknown };
        return `${field}: ${JSON.stringify(change.from)} → ${JSON.stringify(change.to)}`;
      }
      return `${field}: ${JSON.stringify(value)}`;
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
