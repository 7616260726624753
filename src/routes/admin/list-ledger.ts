import { createRoute, z } from "@hono/zod-openapi";
import { MAX_LEDGER_PAGE } from "../../record-limits.js";
import type { Services } from "../../services/build.js";
import { summaryOr404 } from "./account-summary.js";
import { AccountIdParams } from "./get-account.js";
import { readQuery, wholeNumberParam } from "./input.js";
import { BeforeParam, pagedResponse } from "./paged.js";
import { KindParam } from "./ledger-filter.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { LedgerEntryView, ledgerEntryView } from "../../views/admin.js";

const LedgerQuery = z.object({
  limit: wholeNumberParam(1, MAX_LEDGER_PAGE, `How many entries, newest first: 1 to ${MAX_LEDGER_PAGE}, 50 by default.`),
  before: BeforeParam,
  kind: KindParam,
});

const route = createRoute({
  method: "get",
  path: "/admin/v1/accounts/{id}/ledger",
  summary: "An account's ledger entries, newest first, a page at a time, of some kinds or all; each with its request id and key",
  security: ADMIN_SECURITY,
  request: { params: AccountIdParams, query: LedgerQuery },
  responses: {
    200: pagedResponse(LedgerEntryView, "AdminLedgerPage"),
    ...adminErrors("No such account (account_not_found).", {
      400: `limit is not a whole number from 1 to ${MAX_LEDGER_PAGE}, before not a positive whole number, or kind not a known kind.`,
    }),
  },
});

export function registerListLedger(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const { id } = (await summaryOr404(services, c.req.param("id")!)).account;
    const { limit, before, kind } = readQuery(c, LedgerQuery);
    const page = await services.reports.ledgerPage(id, { limit: limit ?? 50, before, kinds: kind });
    return c.json({ entries: page.entries.map(ledgerEntryView), next_before: page.nextBefore }, 200);
  });
}
