import { createRoute, z } from "@hono/zod-openapi";
import type { Store } from "../../store/types.js";
import { requestIdHeader } from "../shared.schema.js";
import { summarizeAccount } from "./account-summary.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { AccountView } from "./views.js";

const route = createRoute({
  method: "get",
  path: "/admin/v1/accounts",
  summary: "Every account, with its plan, balance and usage of the current period",
  security: ADMIN_SECURITY,
  responses: {
    200: {
      description: "Accounts, oldest first.",
      headers: requestIdHeader,
      content: { "application/json": { schema: z.object({ accounts: z.array(AccountView) }) } },
    },
    ...adminErrors(""),
  },
});

export function registerListAccounts(api: AdminApi, store: Store): void {
  addRoute(api, route, (c) => {
    const plans = new Map(store.plans.list().map((plan) => [plan.id, plan]));
    const accounts = store.accounts.list().map((account) => summarizeAccount(store, account, plans.get(account.planId)));
    return c.json({ accounts }, 200);
  });
}
