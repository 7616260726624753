import { createRoute, z } from "@hono/zod-openapi";
import { adminActor } from "../../http/admin-auth.js";
import { MAX_NAME_LENGTH, PLAN_LIMITS } from "../../record-limits.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { EuroString, micros, readBody } from "./input.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { PlanView, planView } from "../../views/admin.js";

/** A plan's editable fields; the price is a euro string, like every amount people type. */
export const planFields = {
  name: z.string().max(MAX_NAME_LENGTH),
  requests_per_minute: z.number().int().min(1).max(PLAN_LIMITS.requestsPerMinute),
  allowance_questions: z
    .number()
    .int()
    .min(0)
    .max(PLAN_LIMITS.allowanceQuestions)
    .openapi({ description: "Questions per monthly period before requests are billed to the balance." }),
  price_per_million: EuroString.openapi({ description: "Euros per million input tokens billed to the balance.", example: "0.05" }),
  allowed_models: z
    .array(z.string())
    .min(1)
    .max(100)
    .nullable()
    .optional()
    .openapi({
      description:
        "The model ids (JUDGE_MODELS) its keys may use; others are refused with 400 model_not_allowed. Absent or null: every model (null on a change clears it).",
      example: ["small"],
    }),
};

const CreatePlanBody = z.strictObject(planFields).openapi("AdminPlanInput");

const route = createRoute({
  method: "post",
  path: "/admin/v1/plans",
  summary: "Create a plan",
  security: ADMIN_SECURITY,
  request: { body: { required: true, content: { "application/json": { schema: CreatePlanBody } } } },
  responses: {
    201: { description: "The new plan.", headers: requestIdHeader, content: { "application/json": { schema: PlanView } } },
    ...adminErrors("", { 400: "A missing or invalid field.", 409: "A plan with that name exists." }),
  },
});

export function registerCreatePlan(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const body = await readBody(c, CreatePlanBody);
    const plan = await services.plans.create(
      {
        name: body.name,
        requestsPerMinute: body.requests_per_minute,
        allowanceQuestions: body.allowance_questions,
        pricePerMillion: micros(body.price_per_million, "price_per_million"),
        allowedModels: body.allowed_models,
      },
      adminActor(c),
    );
    return c.json(planView(plan), 201);
  });
}
