import type { OpenAPIHono, RouteConfig } from "@hono/zod-openapi";
import type { Handler } from "hono";
import type { ErrorStatus } from "../../errors.js";
import type { AppEnv } from "../../http/context.js";
import { AdminErrorBody, errorResponses } from "../shared.schema.js";

/** The admin API's own app: its routes and OpenAPI document stay apart from the public ones. */
export type AdminApi = OpenAPIHono<AppEnv>;

/** The name of the admin token's security scheme in the admin OpenAPI document. */
export const ADMIN_SECURITY = [{ adminToken: [] }];

/**
 * Documents `route` and serves it with `handler`, which reads and validates its own input
 * (input.ts), as POST /v1/systemone does. `api.openapi()` would validate instead, but its
 * validators throw HTTPExceptions (malformed JSON, content type) that the app reports as 500s,
 * and they read bodies without a size limit.
 */
export function addRoute(api: AdminApi, route: RouteConfig & { getRoutingPath(): string }, handler: Handler<AppEnv>): void {
  api.openAPIRegistry.registerPath(route);
  api.on(route.method.toUpperCase(), route.getRoutingPath(), handler);
}

const NOT_FOUND_EXPLAINED = "Also the answer to any request without the admin token: the admin API is indistinguishable from an unknown path.";

const DATABASE_DOWN = "The database cannot be reached or did not answer in time (database_unavailable).";

/** Error responses of an admin route: 404 (see NOT_FOUND_EXPLAINED) and 502 are always among them. */
export function adminErrors<S extends Exclude<ErrorStatus, 404 | 502>>(notFound: string, others: Record<S, string> = {} as Record<S, string>) {
  const descriptions = { ...others, 404: `${notFound} ${NOT_FOUND_EXPLAINED}`.trim(), 502: DATABASE_DOWN } as Record<S | 404 | 502, string>;
  return errorResponses(descriptions, {}, AdminErrorBody);
}
