import { createRoute, z } from "@hono/zod-openapi";
import { adminActor } from "../../http/admin-auth.js";
import { MAX_NAME_LENGTH } from "../../record-limits.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryView } from "./account-summary.js";
import { readBody } from "./input.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { AccountView } from "../../views/admin.js";

const CreateAccountBody = z
  .strictObject({
    name: z.string().max(MAX_NAME_LENGTH).openapi({ description: "A label for people; any text." }),
    plan: z.string().optional().openapi({ description: 'The plan\'s id or name; "default" when absent.' }),
  })
  .openapi("AdminAccountInput");

const route = createRoute({
  method: "post",
  path: "/admin/v1/accounts",
  summary: "Create an account",
  security: ADMIN_SECURITY,
  request: { body: { required: true, content: { "application/json": { schema: CreateAccountBody } } } },
  responses: {
    201: { description: "The new account, with a zero balance.", headers: requestIdHeader, content: { "application/json": { schema: AccountView } } },
    ...adminErrors("No such plan (plan_not_found).", { 400: "A missing or invalid field." }),
  },
});

export function registerCreateAccount(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const body = await readBody(c, CreateAccountBody);
    return c.json(summaryView(await services.accounts.create({ name: body.name, plan: body.plan }, adminActor(c))), 201);
  });
}
