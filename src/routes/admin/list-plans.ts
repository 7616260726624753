import { createRoute, z } from "@hono/zod-openapi";
import type { Store } from "../../store/types.js";
import { requestIdHeader } from "../shared.schema.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { PlanView, planView } from "./views.js";

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

export function registerListPlans(api: AdminApi, store: Store): void {
  addRoute(api, route, (c) => c.json({ plans: store.plans.list().map(planView) }, 200));
}
