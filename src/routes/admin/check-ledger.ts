import { createRoute } from "@hono/zod-openapi";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import type { AdminMemory } from "./last-check.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { LedgerCheckView, ledgerCheckView } from "../../views/admin.js";

const route = createRoute({
  method: "get",
  path: "/admin/v1/ledger/check",
  summary: "Recompute every balance and period usage from the ledger and compare",
  security: ADMIN_SECURITY,
  responses: {
    200: {
      description: "ok is true when every account's columns equal the sums of its ledger entries and open holds.",
      headers: requestIdHeader,
      content: { "application/json": { schema: LedgerCheckView } },
    },
    ...adminErrors(""),
  },
});

export function registerCheckLedger(api: AdminApi, services: Services, memory: AdminMemory): void {
  addRoute(api, route, async (c) => {
    const check = await services.ledger.check();
    memory.lastLedgerCheck = { at: Date.now(), check };
    return c.json(ledgerCheckView(check), 200);
  });
}
