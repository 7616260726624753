import type { App } from "../http/context.js";

export const API_VERSION = "1.0.0";

/** Serves the OpenAPI 3.1 document generated from the routes' own schemas. */
export function registerOpenApi(app: App): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API key created with `judge keys create`.",
  });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Typed Judgment Service",
      version: API_VERSION,
      description: "Typed questions (choice, noul, score) about a state, answered with probabilities read from a language model.",
    },
  });
}
