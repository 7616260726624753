import type { Database } from "./db.js";
import type { IdempotencyRepository, StoredResponse } from "./types.js";

interface ClaimRow {
  request_hash: string;
  state: "running" | "done";
  response: string | null;
  expires_at: number;
}

/**
 * Idempotency keys per account (Stripe's semantics). A claim is "running" until its request
 * settles; settling stores the response in the same transaction as the charge (see billing.ts),
 * so a replay can never be charged twice nor miss a charge. A claim left running by a crashed
 * process expires with its reservation.
 */
export function createIdempotencyRepository(db: Database, now: () => number, runningTtlMs: number): IdempotencyRepository {
  const select = db.prepare<[string, string], ClaimRow>(
    "SELECT request_hash, state, response, expires_at FROM idempotency_keys WHERE account_id = ? AND key = ?",
  );
  const upsert = db.prepare(
    `INSERT OR REPLACE INTO idempotency_keys (account_id, key, request_hash, owner, state, created_at, expires_at)
     VALUES (@accountId, @key, @requestHash, @owner, 'running', @at, @expiresAt)`,
  );
  const remove = db.prepare(
    "DELETE FROM idempotency_keys WHERE account_id = ? AND key = ? AND owner = ? AND state = 'running'",
  );

  const claim = db.transaction((input: Parameters<IdempotencyRepository["claim"]>[0]) => {
    const at = now();
    const row = select.get(input.accountId, input.key);
    if (row && row.expires_at > at) {
      if (row.state === "running") return { kind: "running" } as const;
      if (row.request_hash !== input.requestHash) return { kind: "mismatch" } as const;
      return { kind: "replay", response: JSON.parse(row.response!) as StoredResponse } as const;
    }
    upsert.run({ ...input, at, expiresAt: at + runningTtlMs });
    return { kind: "claimed" } as const;
  });

  return {
    claim: (input) => claim.immediate(input),
    abandon(input) {
      remove.run(input.accountId, input.key, input.owner);
    },
  };
}
