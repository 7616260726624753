import { z } from "@hono/zod-openapi";
import type { App } from "../../http/context.js";
import { requestIdHeader } from "../shared.schema.js";
import { documentHeaders, serveOpenApiDocument } from "./document.js";

export const API_VERSION = "1.0.0";

/** Serves the OpenAPI 3.1 document generated from the routes' own schemas. */
export function registerOpenApi(app: App): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API key created with `judge keys create`.",
  });
  // The document does not describe its own route unless told.
  app.openAPIRegistry.registerPath({
    method: "get",
    path: "/openapi.json",
    summary: "This document",
    responses: {
      200: {
        description: "The OpenAPI 3.1 description of the interface.",
        headers: { ...requestIdHeader, ...documentHeaders },
        content: { "application/json": { schema: z.record(z.string(), z.unknown()) } },
      },
    },
  });
  serveOpenApiDocument(app, "/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Typed Judgment Service",
      version: API_VERSION,
      description: "Typed questions (choice, noul, score) about a state, answered with probabilities read from a language model.",
    },
  });
}
