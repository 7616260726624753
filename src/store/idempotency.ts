import type { Database } from "./database.js";
import { namedStatement } from "./named-statement.js";
import type { IdempotencyClaim, IdempotencyRepository, StoredResponse } from "./types.js";

/**
 * Idempotency keys per account (Stripe's semantics). A claim is "running" until its request
 * settles; settling stores the response in the same transaction as the charge (see billing.ts),
 * so a replay can never be charged twice nor miss a charge. A claim left running by a crashed
 * process expires with its reservation.
 */
export function createIdempotencyRepository(database: Database, now: () => number, runningTtlMs: number): IdempotencyRepository {
  const { db } = database;
  // A request with an Idempotency-Key runs these (plain SQL: see Statement in database.ts; named parameters: named-statement.ts).
  type Key = { accountId: string; key: string };
  const insertOrTakeExpired = namedStatement<Key & { requestHash: string; owner: string; at: number; expiresAt: number }, { owner: string }>(
    database,
    `INSERT INTO idempotency_keys (account_id, "key", request_hash, owner, state, response, created_at, expires_at)
     VALUES (:accountId, :key, :requestHash, :owner, 'running', NULL, :at, :expiresAt)
     ON CONFLICT (account_id, "key") DO UPDATE SET request_hash = excluded.request_hash, owner = excluded.owner,
       state = excluded.state, response = excluded.response, created_at = excluded.created_at, expires_at = excluded.expires_at
     WHERE idempotency_keys.expires_at <= :at
     RETURNING owner`,
  );
  const find = namedStatement<Key, { request_hash: string; state: "running" | "done"; response: string | null }>(
    database,
    `SELECT request_hash, state, response FROM idempotency_keys WHERE account_id = :accountId AND "key" = :key`,
  );
  const forget = namedStatement<Key & { owner: string }>(
    database,
    `DELETE FROM idempotency_keys WHERE account_id = :accountId AND "key" = :key AND owner = :owner AND state = 'running'`,
  );

  /**
   * One statement decides who owns the key, on any number of instances: the insert wins when
   * there is no row, or replaces a row that has expired; otherwise the row stands and is read.
   */
  async function claim(input: Parameters<IdempotencyRepository["claim"]>[0]): Promise<IdempotencyClaim> {
    const at = now();
    const { accountId, key, requestHash, owner } = input;
    const [claimed] = await insertOrTakeExpired.all(db, { accountId, key, requestHash, owner, at, expiresAt: at + runningTtlMs });
    if (claimed?.owner === owner) return { kind: "claimed" };
    const [row] = await find.all(db, { accountId, key });
    // Abandoned between the two statements: the key is free again.
    if (!row) return claim(input);
    if (row.state === "running") return { kind: "running" };
    if (row.request_hash !== requestHash) return { kind: "mismatch" };
    return { kind: "replay", response: JSON.parse(row.response!) as StoredResponse };
  }

  return {
    claim,
    async abandon(input) {
      await forget.all(db, { accountId: input.accountId, key: input.key, owner: input.owner });
    },
    async sweep() {
      const expired = await db.deleteFrom("idempotency_keys").where("expires_at", "<=", now()).executeTakeFirst();
      return Number(expired.numDeletedRows);
    },
  };
}
