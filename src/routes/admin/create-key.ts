import { createRoute, z } from "@hono/zod-openapi";
import { adminActor } from "../../http/admin-auth.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryOr404 } from "./account-summary.js";
import { AccountIdParams } from "./get-account.js";
import { readBody } from "./input.js";
import { keyChanges, keyFields } from "./key-fields.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { KeyView, keyView } from "../../views/admin.js";

const CreateKeyBody = z.strictObject(keyFields).partial().openapi("AdminKeyInput");

const CreatedKey = KeyView.extend({
  key: z.string().openapi({ description: "The API key itself. Shown in this response only: it is stored as a hash." }),
}).openapi("AdminCreatedKey");

const route = createRoute({
  method: "post",
  path: "/admin/v1/accounts/{id}/keys",
  summary: "Create an API key for an account; the key is in this response only",
  security: ADMIN_SECURITY,
  request: { params: AccountIdParams, body: { required: true, content: { "application/json": { schema: CreateKeyBody } } } },
  responses: {
    201: { description: "The key and its record.", headers: requestIdHeader, content: { "application/json": { schema: CreatedKey } } },
    ...adminErrors("No such account (account_not_found).", { 400: "An invalid field; send {} for an unnamed key without limits." }),
  },
});

export function registerCreateKey(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const { id } = (await summaryOr404(services, c.req.param("id")!)).account;
    const body = await readBody(c, CreateKeyBody);
    const { name, ...limits } = keyChanges(body);
    const { key, record } = await services.keys.create({ accountId: id, ...(name != null && { name }), ...limits }, adminActor(c));
    // A key must never be served from a cache or kept in one.
    c.header("cache-control", "no-store");
    return c.json({ ...keyView(record), key }, 201);
  });
}
