import { createRoute, z } from "@hono/zod-openapi";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryOr404 } from "./account-summary.js";
import { AccountIdParams } from "./get-account.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { AdminTaskSummary, adminTaskSummary } from "./task-views.js";

const route = createRoute({
  method: "get",
  path: "/admin/v1/accounts/{id}/tasks",
  summary: "An account's tasks, each with its latest fit (state and progress) and latest version",
  security: ADMIN_SECURITY,
  request: { params: AccountIdParams },
  responses: {
    200: {
      description: "The account's tasks, oldest first.",
      headers: requestIdHeader,
      content: { "application/json": { schema: z.object({ tasks: z.array(AdminTaskSummary) }).openapi("AdminTaskList") } },
    },
    ...adminErrors("No such account (account_not_found)."),
  },
});

export function registerListTasks(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const { id } = (await summaryOr404(services, c.req.param("id")!)).account;
    const { tasks } = services;
    const records = await tasks.list(id);
    const summaries = await Promise.all(
      records.map(async (record) => {
        // Deleted between the list and this read: left out, as if listed a moment later.
        const task = await tasks.get(id, record.id);
        if (!task) return undefined;
        // The newest of each only: a task's versions carry their heads and reports.
        const [fits, versions] = await Promise.all([tasks.fits(task, 1), tasks.versions(task, 1)]);
        return adminTaskSummary(task, fits[0], versions[0]);
      }),
    );
    return c.json({ tasks: summaries.filter((summary) => summary !== undefined) }, 200);
  });
}
