import { createRoute, z } from "@hono/zod-openapi";
import { adminActor } from "../../http/admin-auth.js";
import { ApiError } from "../../errors.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { KeyView, keyView } from "../../views/admin.js";

const route = createRoute({
  method: "post",
  path: "/admin/v1/keys/{id}/revoke",
  summary: "Revoke an API key; its next request gets 401",
  security: ADMIN_SECURITY,
  request: { params: z.object({ id: z.string().openapi({ description: "The key's id (key_…), not its prefix." }) }) },
  responses: {
    200: {
      description: "The revoked key. Revoking a revoked key changes nothing and answers the same.",
      headers: requestIdHeader,
      content: { "application/json": { schema: KeyView } },
    },
    ...adminErrors("No such key (key_not_found)."),
  },
});

export function registerRevokeKey(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const id = c.req.param("id")!;
    // By id only: the store also accepts a displayed prefix, which a URL should not guess at.
    // There is no lookup by id, so the key is found among all keys (admin traffic is light).
    if (!(await services.keys.list()).some((record) => record.id === id)) throw new ApiError("key_not_found", `No key with id ${id}`);
    const revoked = await services.keys.revoke(id, adminActor(c));
    if (!revoked) throw new ApiError("key_not_found", `No key with id ${id}`);
    return c.json(keyView(revoked), 200);
  });
}
