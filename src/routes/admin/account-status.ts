import { createRoute, z } from "@hono/zod-openapi";
import { adminActor } from "../../http/admin-auth.js";
import { MAX_NAME_LENGTH } from "../../record-limits.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryOr404, summaryView } from "./account-summary.js";
import { AccountIdParams } from "./get-account.js";
import { readBody } from "./input.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { AccountView } from "../../views/admin.js";

/** Renaming, disabling and enabling an account: each recorded in the audit log with the change. */

const RenameBody = z.strictObject({ name: z.string().max(MAX_NAME_LENGTH).openapi({ description: "The new display name." }) }).openapi("AdminRenameAccount");

const accountResponse = (description: string) => ({
  description,
  headers: requestIdHeader,
  content: { "application/json": { schema: AccountView } },
});

const rename = createRoute({
  method: "patch",
  path: "/admin/v1/accounts/{id}",
  summary: "Rename an account",
  security: ADMIN_SECURITY,
  request: { params: AccountIdParams, body: { required: true, content: { "application/json": { schema: RenameBody } } } },
  responses: {
    200: accountResponse("The account under its new name. The same name again changes nothing and records nothing."),
    ...adminErrors("No such account (account_not_found).", { 400: "A missing, empty or too long name." }),
  },
});

const toggle = (verb: "disable" | "enable") =>
  createRoute({
    method: "post",
    path: `/admin/v1/accounts/{id}/${verb}`,
    summary:
      verb === "disable"
        ? "Disable an account: its keys get 401 account_disabled from their next request, on every instance; nothing is deleted"
        : "Enable a disabled account: its keys work again (those not revoked)",
    security: ADMIN_SECURITY,
    request: { params: AccountIdParams },
    responses: {
      200: accountResponse(`The account, ${verb}d. Doing it twice changes nothing and records nothing.`),
      ...adminErrors("No such account (account_not_found)."),
    },
  });

export function registerAccountStatus(api: AdminApi, services: Services): void {
  addRoute(api, rename, async (c) => {
    const { id } = (await summaryOr404(services, c.req.param("id")!)).account;
    const body = await readBody(c, RenameBody);
    return c.json(summaryView(await services.accounts.rename(id, body.name, adminActor(c))), 200);
  });
  for (const verb of ["disable", "enable"] as const) {
    addRoute(api, toggle(verb), async (c) => {
      const { id } = (await summaryOr404(services, c.req.param("id")!)).account;
      return c.json(summaryView(await services.accounts.setDisabled(id, verb === "disable", adminActor(c))), 200);
    });
  }
}
