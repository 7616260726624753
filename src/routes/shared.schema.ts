import { z } from "@hono/zod-openapi";
import type { ErrorStatus } from "../errors.js";
import { ERROR_STATUS } from "../errors.js";

/** Schemas shared by every route: the error body and the request-id header. */
export const ErrorBody = z
  .object({
    error: z.string().openapi({ description: "What went wrong, for people." }),
    code: z.enum(Object.keys(ERROR_STATUS) as [string, ...string[]]).openapi({ description: "Stable, for programs." }),
  })
  .openapi("Error");

export const requestIdHeader = {
  "x-request-id": { description: "Unique id of the request; quote it to support.", schema: { type: "string" as const } },
  "x-typesafe-request-id": {
    description: "The same id, under the name the System One SDKs read it from.",
    schema: { type: "string" as const },
  },
};

export function errorResponses<S extends ErrorStatus>(descriptions: Record<S, string>) {
  const out = {} as Record<S, { description: string; headers: typeof requestIdHeader; content: { "application/json": { schema: typeof ErrorBody } } }>;
  for (const [status, description] of Object.entries(descriptions) as unknown as [S, string][]) {
    out[status] = { description, headers: requestIdHeader, content: { "application/json": { schema: ErrorBody } } };
  }
  return out;
}
