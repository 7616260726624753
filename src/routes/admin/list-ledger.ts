import { createRoute, z } from "@hono/zod-openapi";
import { MAX_LEDGER_PAGE } from "../../store/ledger.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryOr404 } from "./account-summary.js";
import { AccountIdParams } from "./get-account.js";
import { readQuery } from "./input.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { LedgerEntryView, ledgerEntryView } from "./views.js";

const LedgerQuery = z.object({
  limit: z
    .string()
    .regex(/^\d{1,4}$/, `must be a whole number from 1 to ${MAX_LEDGER_PAGE}`)
    .transform(Number)
    .pipe(z.number().min(1, `must be at least 1`).max(MAX_LEDGER_PAGE, `must be at most ${MAX_LEDGER_PAGE}`))
    .optional()
    .openapi({ description: `How many entries, newest first: 1 to ${MAX_LEDGER_PAGE}, 50 by default.`, type: "string" }),
});

const route = createRoute({
  method: "get",
  path: "/admin/v1/accounts/{id}/ledger",
  summary: "An account's latest ledger entries",
  security: ADMIN_SECURITY,
  request: { params: AccountIdParams, query: LedgerQuery },
  responses: {
    200: {
      description: "Entries, newest first.",
      headers: requestIdHeader,
      content: { "application/json": { schema: z.object({ entries: z.array(LedgerEntryView) }) } },
    },
    ...adminErrors("No such account (account_not_found).", { 400: "limit is not a whole number from 1 to 500." }),
  },
});

export function registerListLedger(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const { id } = (await summaryOr404(services, c.req.param("id")!)).account;
    const { limit } = readQuery(c, LedgerQuery);
    return c.json({ entries: (await services.accounts.entries(id, { limit: limit ?? 50 })).map(ledgerEntryView) }, 200);
  });
}
