import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { formatEuros, MAX_MICROS, parseEuros } from "../../money/money.js";
import { ApiError } from "../../errors.js";
import type { AppEnv } from "../../http/context.js";
import { readJsonBody } from "../../http/read-body.js";
import { describeIssues } from "../systemone/route.js";

/** Admin bodies are a few named fields; anything bigger is a mistake, refused before it is held. */
export const ADMIN_MAX_BODY_BYTES = 16 * 1024;

/**
 * An amount of money as people type it: a decimal euro string ("12.50", "0.000001"). A string,
 * never a JSON number, because a number has already passed through floating point.
 */
export const EuroString = z
  .string({ error: 'must be a decimal euro amount in a JSON string, such as "12.50"' })
  .regex(/^\d{1,10}(\.\d{1,6})?$/, 'must be a decimal euro amount such as "12.50": digits, at most 6 decimals, no sign or exponent')
  .openapi({ description: "Exact decimal euros, at most 6 decimals, as a string.", example: "12.50" });

/** The JSON body, validated by `schema`; invalid JSON or fields become 400s in the catalogue's shape. */
export async function readBody<S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.infer<S>> {
  const { value } = await readJsonBody(c, ADMIN_MAX_BODY_BYTES);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ApiError("invalid_request", "the request body must be a JSON object");
  }
  return parsed(schema, value);
}

/** A query parameter holding a whole number from `min` to `max`, refused with a message saying so. */
export function wholeNumberParam(min: number, max: number, description: string) {
  const range = `must be a whole number from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d{1,16}$/, range)
    .transform(Number)
    .pipe(z.number().min(min, range).max(max, range))
    .optional()
    .openapi({ description, type: "string" });
}

export function readQuery<S extends z.ZodType>(c: Context<AppEnv>, schema: S): z.infer<S> {
  return parsed(schema, c.req.query());
}

function parsed<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new ApiError("invalid_request", describeIssues(result.error));
  return result.data;
}

/** Micro-euros of a EuroString field; `field` names it in the error. */
export function micros(text: string, field: string): number {
  const amount = parseEuros(text);
  if (amount === undefined) {
    const most = formatEuros(MAX_MICROS);
    throw new ApiError("invalid_request", `${field}: ${JSON.stringify(text)} is not a decimal euro amount of at most ${most}`);
  }
  return amount;
}
