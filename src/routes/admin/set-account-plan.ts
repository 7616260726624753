import { createRoute, z } from "@hono/zod-openapi";
import { adminActor } from "../../http/admin-auth.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryOr404, summaryView } from "./account-summary.js";
import { AccountIdParams } from "./get-account.js";
import { readBody } from "./input.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { AccountView } from "../../views/admin.js";

const SetPlanBody = z.strictObject({ plan: z.string().openapi({ description: "The plan's id or name." }) }).openapi("AdminSetPlan");

const route = createRoute({
  method: "put",
  path: "/admin/v1/accounts/{id}/plan",
  summary: "Move an account to another plan, from its next request on",
  security: ADMIN_SECURITY,
  request: { params: AccountIdParams, body: { required: true, content: { "application/json": { schema: SetPlanBody } } } },
  responses: {
    200: { description: "The account on its new plan.", headers: requestIdHeader, content: { "application/json": { schema: AccountView } } },
    ...adminErrors("No such account (account_not_found) or plan (plan_not_found).", { 400: "A missing or invalid field." }),
  },
});

export function registerSetAccountPlan(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    // The account in the path is checked first, so a missing account is reported as such.
    const { id } = (await summaryOr404(services, c.req.param("id")!)).account;
    const body = await readBody(c, SetPlanBody);
    return c.json(summaryView(await services.accounts.setPlan(id, body.plan, adminActor(c))), 200);
  });
}
