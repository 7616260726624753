import { createRoute, z } from "@hono/zod-openapi";
import { MAX_AUDIT_PAGE } from "../../record-limits.js";
import type { Services } from "../../services/build.js";
import { readQuery, wholeNumberParam } from "./input.js";
import { BeforeParam, pagedResponse } from "./paged.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { AuditEntryView, auditEntryView } from "../../views/audit.js";

const AuditQuery = z.object({
  account: z.string().optional().openapi({ description: "Only the actions concerning this account (acct_…): its own, its keys', its balance's." }),
  limit: wholeNumberParam(1, MAX_AUDIT_PAGE, `How many entries, newest first: 1 to ${MAX_AUDIT_PAGE}, 50 by default.`),
  before: BeforeParam,
});

const route = createRoute({
  method: "get",
  path: "/admin/v1/audit",
  summary: "The audit log of admin actions, newest first, a page at a time",
  security: ADMIN_SECURITY,
  request: { query: AuditQuery },
  responses: {
    200: pagedResponse(AuditEntryView, "AdminAuditPage"),
    ...adminErrors("", { 400: `limit is not a whole number from 1 to ${MAX_AUDIT_PAGE}, or before not a positive whole number.` }),
  },
});

export function registerListAudit(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const { account, limit, before } = readQuery(c, AuditQuery);
    const page = await services.audit.page({ accountId: account || undefined, limit: limit ?? 50, before });
    return c.json({ entries: page.entries.map(auditEntryView), next_before: page.nextBefore }, 200);
  });
}
