import { createRoute, z } from "@hono/zod-openapi";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryView } from "./account-summary.js";
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

export function registerListAccounts(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => c.json({ accounts: (await services.accounts.list()).map(summaryView) }, 200));
}
