import { z } from "@hono/zod-openapi";
import { requestIdHeader } from "../shared.schema.js";
import { documentHeaders, serveOpenApiDocument } from "../openapi/document.js";
import { API_VERSION } from "../openapi/route.js";
import { ADMIN_SECURITY, type AdminApi } from "./route.js";

/** The admin API's own OpenAPI 3.1 document, behind the admin token like the rest of /admin. */
export function registerAdminOpenApi(api: AdminApi): void {
  api.openAPIRegistry.registerComponent("securitySchemes", "adminToken", {
    type: "http",
    scheme: "bearer",
    description: "The admin token (JUDGE_ADMIN_TOKEN). API keys are not accepted here.",
  });
  api.openAPIRegistry.registerPath({
    method: "get",
    path: "/admin/openapi.json",
    summary: "This document",
    security: ADMIN_SECURITY,
    responses: {
      200: {
        description: "The OpenAPI 3.1 description of the admin API.",
        headers: { ...requestIdHeader, ...documentHeaders },
        content: { "application/json": { schema: z.record(z.string(), z.unknown()) } },
      },
    },
  });
  serveOpenApiDocument(api, "/admin/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Typed Judgment Service — admin API",
      version: API_VERSION,
      description:
        "Accounts, plans, balances, API keys and tenants' tasks (read only). Every request needs `Authorization: Bearer <admin token>`; " +
        "without it every path answers 404 not_found, exactly like a path that does not exist.",
    },
    security: ADMIN_SECURITY,
  });
}
