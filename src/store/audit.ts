import { MAX_AUDIT_PAGE } from "../record-limits.js";
import type { Database, Queries } from "./database.js";
import type { AdminAction, AdminActor, AuditEntry, AuditObjectKind, AuditRepository } from "./audit-types.js";

export { MAX_AUDIT_PAGE };

/** How the log names an actor: `env-token`, `token:<name>`, `cli:<user>`. */
export function actorLabel(by: AdminActor): string {
  switch (by.kind) {
    case "env-token":
      return "env-token";
    case "admin-token":
      return `token:${by.name}`;
    case "cli":
      return `cli:${by.user}`;
  }
}

/**
 * Writes one audit entry on `trx`: call it inside the transaction that makes the change, so the
 * change and its record commit (or roll back) together. `details` must never hold a key or token.
 */
export async function recordAdminAction(trx: Queries, entry: AdminAction & { by: AdminActor; at: number }): Promise<void> {
  await trx
    .insertInto("audit_log")
    .values({
      at: entry.at,
      actor: actorLabel(entry.by),
      actor_token_id: entry.by.kind === "admin-token" ? entry.by.tokenId : null,
      action: entry.action,
      object_kind: entry.object.kind,
      object_id: entry.object.id,
      account_id: entry.accountId ?? null,
      details: JSON.stringify(entry.details ?? {}),
    })
    .execute();
}

/**
 * Runs `work` in one transaction and, when an actor is given, records what `describe` says of its
 * result in the same transaction. Without an actor (tests, fixtures) nothing is recorded.
 */
export function audited<T>(
  database: Database,
  now: () => number,
  by: AdminActor | undefined,
  work: (trx: Queries) => Promise<T>,
  describe: (result: T) => AdminAction | undefined,
): Promise<T> {
  return database.transaction(async (trx) => {
    const result = await work(trx);
    const action = by && describe(result);
    if (by && action) await recordAdminAction(trx, { ...action, by, at: now() });
    return result;
  });
}

export function createAuditRepository(database: Database): AuditRepository {
  const { db } = database;
  return {
    async page(query) {
      const limit = Math.min(Math.max(1, Math.trunc(query.limit)), MAX_AUDIT_PAGE);
      let select = db
        .selectFrom("audit_log")
        .selectAll()
        .orderBy("id", "desc")
        .limit(limit + 1);
      if (query.accountId !== undefined) select = select.where("account_id", "=", query.accountId);
      if (query.before !== undefined) select = select.where("id", "<", query.before);
      const rows = await select.execute();
      const entries = rows.slice(0, limit).map(
        (row): AuditEntry => ({
          id: row.id,
          at: row.at,
          actor: row.actor,
          actorTokenId: row.actor_token_id,
          action: row.action,
          objectKind: row.object_kind as AuditObjectKind,
          objectId: row.object_id,
          accountId: row.account_id,
          details: JSON.parse(row.details) as Record<string, unknown>,
        }),
      );
      return { entries, nextBefore: rows.length > limit ? entries[limit - 1].id : null };
    },
  };
}
