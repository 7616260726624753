import { z } from "@hono/zod-openapi";
import { ApiError } from "../../errors.js";
import type { KeyChanges } from "../../services/types.js";
import { MAX_NAME_LENGTH, PLAN_LIMITS } from "../../record-limits.js";
import { INSTANT_FORMAT, parseInstant } from "../../views/instants.js";
import { EuroString, micros } from "./input.js";

/** A key's label and limits, as create (absent: none) and PATCH (absent: unchanged, null: cleared) take them. */
export const keyFields = {
  name: z.string().max(MAX_NAME_LENGTH).nullable().openapi({ description: "A label, e.g. where the key is used." }),
  requests_per_minute: z
    .number()
    .int()
    .min(1)
    .max(PLAN_LIMITS.requestsPerMinute)
    .nullable()
    .openapi({ description: "The key's own per-minute limit, applied on top of the plan's (both must allow a request)." }),
  budget: EuroString.nullable().openapi({
    description: "The most the key may ever charge to the balance, in exact decimal euros; once reached, 402 key_budget_exhausted.",
  }),
  expires_at: z
    .string()
    .nullable()
    .openapi({ description: `The key's expiry: ${INSTANT_FORMAT}. After it, 401 key_expired.` }),
};

/** The body's fields as the store's changes: only those present, each limit checked. */
export function keyChanges(body: Partial<{ [F in keyof typeof keyFields]: z.infer<(typeof keyFields)[F]> }>): KeyChanges {
  const changes: KeyChanges = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.requests_per_minute !== undefined) changes.requestsPerMinute = body.requests_per_minute;
  if (body.budget !== undefined) changes.budgetMicro = body.budget === null ? null : micros(body.budget, "budget");
  if (body.expires_at !== undefined) {
    const at = body.expires_at === null ? null : parseInstant(body.expires_at);
    if (at === undefined) throw new ApiError("invalid_request", `expires_at: ${JSON.stringify(body.expires_at)} is not ${INSTANT_FORMAT}`);
    changes.expiresAt = at;
  }
  return changes;
}
