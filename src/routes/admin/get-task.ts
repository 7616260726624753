import { createRoute, z } from "@hono/zod-openapi";
import { ApiError } from "../../errors.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryOr404 } from "./account-summary.js";
import { AccountIdParams } from "./get-account.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { AdminTaskDetail, adminTaskDetail } from "./task-views.js";

const route = createRoute({
  method: "get",
  path: "/admin/v1/accounts/{id}/tasks/{task}",
  summary: "One task of an account: its questions, every fit with its progress, every version with its held-out report",
  security: ADMIN_SECURITY,
  request: { params: AccountIdParams.extend({ task: z.string().openapi({ description: "The task's id (task_…) or its name in the account." }) }) },
  responses: {
    200: { description: "The task.", headers: requestIdHeader, content: { "application/json": { schema: AdminTaskDetail } } },
    ...adminErrors("No such account (account_not_found), or no task of that id or name in it (task_not_found)."),
  },
});

export function registerGetTask(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const { id } = (await summaryOr404(services, c.req.param("id")!)).account;
    const name = c.req.param("task")!;
    const task = await services.tasks.get(id, name);
    if (!task) throw new ApiError("task_not_found", `No task ${JSON.stringify(name)} in account ${id}`);
    const [fits, versions] = await Promise.all([services.tasks.fits(task), services.tasks.versions(task)]);
    return c.json(adminTaskDetail(task, fits, versions), 200);
  });
}
