import { createRoute, z } from "@hono/zod-openapi";
import { adminActor } from "../../http/admin-auth.js";
import type { PlanInput } from "../../services/types.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { planFields } from "./create-plan.js";
import { micros, readBody } from "./input.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { PlanView, planView } from "../../views/admin.js";

const UpdatePlanBody = z.strictObject(planFields).partial().openapi("AdminPlanChanges");

const route = createRoute({
  method: "patch",
  path: "/admin/v1/plans/{plan}",
  summary: "Change a plan; accounts on it see the change on their next request",
  security: ADMIN_SECURITY,
  request: {
    params: z.object({ plan: z.string().openapi({ description: "The plan's id or name." }) }),
    body: { required: true, content: { "application/json": { schema: UpdatePlanBody } } },
  },
  responses: {
    200: { description: "The plan as changed.", headers: requestIdHeader, content: { "application/json": { schema: PlanView } } },
    ...adminErrors("No such plan (plan_not_found).", { 400: "An invalid field.", 409: "Another plan has that name." }),
  },
});

export function registerUpdatePlan(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const body = await readBody(c, UpdatePlanBody);
    const changes: Partial<PlanInput> = {
      name: body.name,
      requestsPerMinute: body.requests_per_minute,
      allowanceQuestions: body.allowance_questions,
      pricePerMillion: body.price_per_million === undefined ? undefined : micros(body.price_per_million, "price_per_million"),
      allowedModels: body.allowed_models,
    };
    // Absent fields stay as they are; the store would otherwise read `undefined` as a new value.
    const present = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
    const plan = await services.plans.update(c.req.param("plan")!, present, adminActor(c));
    return c.json(planView(plan), 200);
  });
}
