/**
 * The limits of the records the store keeps, in a leaf of the base layer: the store enforces
 * them, and the edge and the CLI validate and document against them without reaching the store.
 */

/** Longest accepted account or key name; names are labels, not documents. */
export const MAX_NAME_LENGTH = 200;

/** The largest page of accounts one query returns. */
export const MAX_ACCOUNT_PAGE = 500;

/** The largest page of ledger entries one call returns. */
export const MAX_LEDGER_PAGE = 500;

/** The largest page of audit entries one call returns. */
export const MAX_AUDIT_PAGE = 500;

/** Upper bounds that keep every product and sum on the money path inside safe integers. */
export const PLAN_LIMITS = {
  requestsPerMinute: 1_000_000,
  allowanceQuestions: 1_000_000_000,
  pricePerMillion: 1_000_000_000_000,
} as const;

/** Every kind of ledger entry (the ledger table's `kind`). */
export const LEDGER_KINDS: readonly ("top_up" | "charge" | "plan" | "adjustment")[] = ["top_up", "charge", "plan", "adjustment"];
