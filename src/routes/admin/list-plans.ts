import { createRoute, z } from "@hono/zod-openapi";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { PlanView, planView } from "../../views/admin.js";

const route = createRoute({
  method: "get",
  path: "/admin/v1/plans",
  summary: "Every plan",
  security: ADMIN_SECURITY,
  responses: {
    200: {
      description: "Plans, oldest first.",
      headers: requestIdHeader,
      content: { "application/json": { schema: z.object({ plans: z.array(PlanView) }) } },
    },
    ...adminErrors(""),
  },
});

export function registerListPlans(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => c.json({ plans: (await services.plans.list()).map(planView) }, 200));
}
