import { z } from "@hono/zod-openapi";
import { requestIdHeader } from "../shared.schema.js";
import { wholeNumberParam } from "./input.js";

/**
 * The admin lists that page by entry id, newest first (the audit log, an account's ledger): one
 * cursor parameter and one page shape, so both read and document their paging alike.
 */
export const BeforeParam = wholeNumberParam(
  1,
  Number.MAX_SAFE_INTEGER,
  "Only entries older than the entry with this id: the next_before of the previous page.",
);

/** The 200 response of such a list: `entries` and `next_before`, under the OpenAPI component `name`. */
export function pagedResponse<Entry extends z.ZodTypeAny>(entry: Entry, name: string) {
  return {
    description: "Entries, newest first.",
    headers: requestIdHeader,
    content: {
      "application/json": {
        schema: z
          .object({
            entries: z.array(entry),
            next_before: z.number().int().nullable().openapi({ description: "Pass as ?before= for the next (older) page; null on the last page." }),
          })
          .openapi(name),
      },
    },
  };
}
