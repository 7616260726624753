import { sql } from "kysely";
import type { Queries } from "./database.js";
import type { LedgerCheck } from "./ledger-types.js";

/**
 * The keys' part of the ledger check: what each key holds equals its open balance holds, and
 * what an account's keys have spent together is never more than the ledger charged the account
 * (spend is counted from the migration that introduced it, so it may be less, never more).
 */
export async function checkKeys(db: Queries): Promise<LedgerCheck["mismatches"]> {
  const mismatches: LedgerCheck["mismatches"] = [];
  const held = await sql<{ id: string; account_id: string; held_micro: number; open: number }>`
    SELECT k.id, k.account_id, k.held_micro,
      (SELECT COALESCE(SUM(r.amount_micro), 0) FROM reservations r WHERE r.key_id = k.id AND r.billed_to = 'balance') AS open
    FROM api_keys k
    WHERE k.held_micro <> 0 OR EXISTS (SELECT 1 FROM reservations r WHERE r.key_id = k.id)
    ORDER BY k.id`.execute(db);
  for (const row of held.rows) {
    if (row.held_micro !== row.open) {
      mismatches.push({ accountId: row.account_id, what: `key ${row.id} held`, unit: "micro_eur", column: row.held_micro, ledgerSum: row.open });
    }
  }
  const spent = await sql<{ account_id: string; spent: number; charged: number }>`
    SELECT k.account_id, SUM(k.spent_micro) AS spent,
      (SELECT COALESCE(-SUM(l.amount_micro), 0) FROM ledger l WHERE l.account_id = k.account_id AND l.kind = 'charge') AS charged
    FROM api_keys k
    GROUP BY k.account_id
    HAVING SUM(k.spent_micro) > 0
    ORDER BY k.account_id`.execute(db);
  for (const row of spent.rows) {
    if (row.spent > row.charged) {
      mismatches.push({
        accountId: row.account_id,
        what: "keys' spend above the account's charges",
        unit: "micro_eur",
        column: row.spent,
        ledgerSum: row.charged,
      });
    }
  }
  return mismatches;
}
