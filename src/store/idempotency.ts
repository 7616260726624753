import type { Database } from "./database.js";
import type { IdempotencyClaim, IdempotencyRepository, StoredResponse } from "./types.js";

/**
 * Idempotency keys per account (Stripe's semantics). A claim is "running" until its request
 * settles; settling stores the response in the same transaction as the charge (see billing.ts),
 * so a replay can never be charged twice nor miss a charge. A claim left running by a crashed
 * process expires with its reservation.
 */
export function createIdempotencyRepository(database: Database, now: () => number, runningTtlMs: number): IdempotencyRepository {
  const { db } = database;

  /**
   * One statement decides who owns the key, on any number of instances: the insert wins when
   * there is no row, or replaces a row that has expired; otherwise the row stands and is read.
   */
  async function claim(input: Parameters<IdempotencyRepository["claim"]>[0]): Promise<IdempotencyClaim> {
    const at = now();
    const claimed = await db
      .insertInto("idempotency_keys")
      .values({
        account_id: input.accountId,
        key: input.key,
        request_hash: input.requestHash,
        owner: input.owner,
        state: "running",
        response: null,
        created_at: at,
        expires_at: at + runningTtlMs,
      })
      .onConflict((oc) =>
        oc
          .columns(["account_id", "key"])
          .doUpdateSet((eb) => ({
            request_hash: eb.ref("excluded.request_hash"),
            owner: eb.ref("excluded.owner"),
            state: eb.ref("excluded.state"),
            response: eb.ref("excluded.response"),
            created_at: eb.ref("excluded.created_at"),
            expires_at: eb.ref("excluded.expires_at"),
          }))
          .where("idempotency_keys.expires_at", "<=", at),
      )
      .returning("owner")
      .executeTakeFirst();
    if (claimed?.owner === input.owner) return { kind: "claimed" };
    const row = await db
      .selectFrom("idempotency_keys")
      .select(["request_hash", "state", "response", "expires_at"])
      .where("account_id", "=", input.accountId)
      .where("key", "=", input.key)
      .executeTakeFirst();
    // Abandoned between the two statements: the key is free again.
    if (!row) return claim(input);
    if (row.state === "running") return { kind: "running" };
    if (row.request_hash !== input.requestHash) return { kind: "mismatch" };
    return { kind: "replay", response: JSON.parse(row.response!) as StoredResponse };
  }

  return {
    claim,
    async abandon(input) {
      await db
        .deleteFrom("idempotency_keys")
        .where("account_id", "=", input.accountId)
        .where("key", "=", input.key)
        .where("owner", "=", input.owner)
        .where("state", "=", "running")
        .execute();
    },
  };
}
