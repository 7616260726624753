import { createRoute, z } from "@hono/zod-openapi";
import { ApiError } from "../../errors.js";
import { adminActor } from "../../http/admin-auth.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { readBody } from "./input.js";
import { keyChanges, keyFields } from "./key-fields.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { KeyView, keyView } from "../../views/admin.js";

const UpdateKeyBody = z.strictObject(keyFields).partial().openapi("AdminKeyChanges");

const route = createRoute({
  method: "patch",
  path: "/admin/v1/keys/{id}",
  summary: "Rename a key or change its limits (null clears one); its next request sees the change",
  security: ADMIN_SECURITY,
  request: {
    params: z.object({ id: z.string().openapi({ description: "The key's id (key_…), not its prefix." }) }),
    body: { required: true, content: { "application/json": { schema: UpdateKeyBody } } },
  },
  responses: {
    200: { description: "The key as changed.", headers: requestIdHeader, content: { "application/json": { schema: KeyView } } },
    ...adminErrors("No such key (key_not_found).", { 400: "An invalid field." }),
  },
});

export function registerUpdateKey(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const id = c.req.param("id")!;
    const changes = keyChanges(await readBody(c, UpdateKeyBody));
    // By id only, as revoke: the store also accepts a displayed prefix, which a URL should not guess at.
    if (!(await services.keys.list()).some((record) => record.id === id)) throw new ApiError("key_not_found", `No key with id ${id}`);
    const updated = await services.keys.update(id, changes, adminActor(c));
    if (!updated) throw new ApiError("key_not_found", `No key with id ${id}`);
    return c.json(keyView(updated), 200);
  });
}
