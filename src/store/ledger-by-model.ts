import { sql } from "kysely";
import type { Queries } from "./database.js";
import type { ModelUsage } from "./ledger-types.js";

/**
 * An account's judgments from `start` (included) to `end` (excluded), by the model that answered
 * (docs/engines/many-models.md); entries from before models were recorded have none (null).
 */
export async function usageByModel(db: Queries, accountId: string, range: { start: number; end: number }): Promise<ModelUsage[]> {
  const rows = await db
    .selectFrom("ledger")
    .select((eb) => [
      "model",
      eb.fn.countAll<number>().as("requests"),
      eb.fn.sum<number>("questions").as("questions"),
      eb.fn.sum<number>("input_tokens").as("input_tokens"),
      sql<number>`SUM(CASE WHEN kind = 'charge' THEN -amount_micro ELSE 0 END)`.as("charged_micro"),
    ])
    .where("account_id", "=", accountId)
    .where("kind", "in", ["plan", "charge"])
    .where("at", ">=", range.start)
    .where("at", "<", range.end)
    .groupBy("model")
    .orderBy("model")
    .execute();
  return rows.map((row) => ({
    model: row.model,
    requests: Number(row.requests),
    questions: Number(row.questions),
    inputTokens: Number(row.input_tokens),
    chargedMicro: Number(row.charged_micro),
  }));
}
