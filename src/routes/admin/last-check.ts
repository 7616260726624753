import type { LedgerCheck } from "../../services/types.js";

/**
 * What this process remembers for the console: the last ledger check it ran, and when. Kept in
 * memory (a check reads every account; the overview must not run one on each visit), so a
 * restart or another instance behind the load balancer knows none.
 */
export interface AdminMemory {
  lastLedgerCheck?: { at: number; check: LedgerCheck };
}
