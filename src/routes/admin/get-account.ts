import { createRoute, z } from "@hono/zod-openapi";
import type { Store } from "../../store/types.js";
import { requestIdHeader } from "../shared.schema.js";
import { accountOr404, summarizeAccount } from "./account-summary.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { AccountView, KeyView, LedgerEntryView, PlanView, keyView, ledgerEntryView, planView } from "./views.js";

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

export function registerGetAccount(api: AdminApi, store: Store): void {
  addRoute(api, route, (c) => {
    const account = accountOr404(store, c.req.param("id")!);
    const summary = summarizeAccount(store, account);
    const plan = store.plans.get(account.planId)!;
    return c.json(
      {
        account: summary,
        plan: planView(plan),
        keys: store.keys.list({ accountId: account.id }).map(keyView),
        ledger: store.ledger.entries(account.id, { limit: RECENT_LEDGER_ENTRIES }).map(ledgerEntryView),
      },
      200,
    );
  });
}
