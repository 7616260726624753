import { z } from "@hono/zod-openapi";
import type { LedgerKind } from "../../services/types.js";
import { LEDGER_KINDS } from "../../record-limits.js";

/** ?kind=top_up or ?kind=charge,plan: the ledger's kinds to list (all when absent). */
export const KindParam = z
  .string()
  .optional()
  .transform((value, context): LedgerKind[] | undefined => {
    if (value === undefined || value.trim() === "") return undefined;
    const kinds = value.split(",").map((kind) => kind.trim());
    const unknown = kinds.filter((kind) => !(LEDGER_KINDS as readonly string[]).includes(kind));
    if (unknown.length > 0) {
      context.addIssue({
        code: "custom",
        message: `unknown kind ${JSON.stringify(unknown[0])}: use ${LEDGER_KINDS.join(", ")}, or several separated by commas`,
      });
      return z.NEVER;
    }
    return [...new Set(kinds)] as LedgerKind[];
  })
  .openapi({
    type: "string",
    description: `Only entries of these kinds, separated by commas: ${LEDGER_KINDS.join(", ")}. All kinds when absent.`,
    example: "top_up,adjustment",
  });
