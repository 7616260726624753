import { createRoute, z } from "@hono/zod-openapi";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryOr404, summaryView } from "./account-summary.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { AccountView, KeyView, LedgerEntryView, PlanView, keyView, ledgerEntryView, planView } from "../../views/admin.js";

/** Enough history to see what just happened; the ledger endpoint pages further back. */
export const RECENT_LEDGER_ENTRIES = 20;

const AccountDetail = z
  .object({
    account: AccountView,
    plan: PlanView,
    keys: z.array(KeyView).openapi({ description: "Every key of the account, revoked ones included, oldest first." }),
    ledger: z.array(LedgerEntryView).openapi({ description: `The ${RECENT_LEDGER_ENTRIES} latest ledger entries, newest first.` }),
  })
  .openapi("AdminAccountDetail");

export const AccountIdParams = z.object({ id: z.string().openapi({ description: "The account's id (acct_…)." }) });

const route = createRoute({
  method: "get",
  path: "/admin/v1/accounts/{id}",
  summary: "One account: plan, balance, usage of the current period, keys and recent ledger",
  security: ADMIN_SECURITY,
  request: { params: AccountIdParams },
  responses: {
    200: { description: "The account.", headers: requestIdHeader, content: { "application/json": { schema: AccountDetail } } },
    ...adminErrors("No such account (account_not_found)."),
  },
});

export function registerGetAccount(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const summary = await summaryOr404(services, c.req.param("id")!);
    const { id } = summary.account;
    const [keys, ledger] = await Promise.all([services.keys.list({ accountId: id }), services.accounts.entries(id, { limit: RECENT_LEDGER_ENTRIES })]);
    return c.json({ account: summaryView(summary), plan: planView(summary.plan), keys: keys.map(keyView), ledger: ledger.map(ledgerEntryView) }, 200);
  });
}
