import { createRoute, z } from "@hono/zod-openapi";
import { ApiError } from "../../errors.js";
import { adminActor } from "../../http/admin-auth.js";
import { MAX_NAME_LENGTH } from "../../record-limits.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { readBody } from "./input.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { AdminTokenView, adminTokenView } from "../../views/audit.js";

/** Named admin tokens: any admin credential may list, create and revoke them (one role, audited). */

const CreateBody = z
  .strictObject({ name: z.string().max(MAX_NAME_LENGTH).openapi({ description: "Whose token it is, e.g. a person's name; unique among active tokens." }) })
  .openapi("AdminTokenInput");

const CreatedToken = AdminTokenView.extend({
  token: z.string().openapi({ description: "The admin token itself (tja_…). Shown in this response only: it is stored as a hash." }),
}).openapi("AdminCreatedToken");

const list = createRoute({
  method: "get",
  path: "/admin/v1/admin-tokens",
  summary: "Every named admin token (prefix only), revoked ones included",
  security: ADMIN_SECURITY,
  responses: {
    200: {
      description: "Oldest first.",
      headers: requestIdHeader,
      content: { "application/json": { schema: z.object({ tokens: z.array(AdminTokenView) }).openapi("AdminTokenList") } },
    },
    ...adminErrors(""),
  },
});

const create = createRoute({
  method: "post",
  path: "/admin/v1/admin-tokens",
  summary: "Create a named admin token; the token is in this response only",
  security: ADMIN_SECURITY,
  request: { body: { required: true, content: { "application/json": { schema: CreateBody } } } },
  responses: {
    201: { description: "The token and its record.", headers: requestIdHeader, content: { "application/json": { schema: CreatedToken } } },
    ...adminErrors("", { 400: "A missing or invalid name, or one an active token already has." }),
  },
});

const revoke = createRoute({
  method: "post",
  path: "/admin/v1/admin-tokens/{id}/revoke",
  summary: "Revoke a named admin token; its next request gets 404 like any unknown path",
  security: ADMIN_SECURITY,
  request: { params: z.object({ id: z.string().openapi({ description: "The token's id (adm_…)." }) }) },
  responses: {
    200: {
      description: "The revoked token. Revoking twice changes nothing.",
      headers: requestIdHeader,
      content: { "application/json": { schema: AdminTokenView } },
    },
    ...adminErrors("No such admin token (admin_token_not_found)."),
  },
});

export function registerAdminTokens(api: AdminApi, services: Services): void {
  addRoute(api, list, async (c) => c.json({ tokens: (await services.adminTokens.list()).map(adminTokenView) }, 200));
  addRoute(api, create, async (c) => {
    const body = await readBody(c, CreateBody);
    const { token, record } = await services.adminTokens.create({ name: body.name }, adminActor(c));
    c.header("cache-control", "no-store");
    return c.json({ ...adminTokenView(record), token }, 201);
  });
  addRoute(api, revoke, async (c) => {
    const id = c.req.param("id")!;
    // By id only in a URL: names are for people at a terminal.
    const known = id.startsWith("adm_") && (await services.adminTokens.list()).some((record) => record.id === id);
    const revoked = known ? await services.adminTokens.revoke(id, adminActor(c)) : undefined;
    if (!revoked) throw new ApiError("admin_token_not_found", `No admin token with id ${id}`);
    return c.json(adminTokenView(revoked), 200);
  });
}
