import { OpenAPIHono } from "@hono/zod-openapi";
import { Hono } from "hono";
import { adminOnly } from "../../http/admin-auth.js";
import type { App, AppEnv } from "../../http/context.js";
import type { Services } from "../../services/build.js";
import { registerAccountStatus } from "./account-status.js";
import { registerAdminTokens } from "./admin-tokens.js";
import { registerCheckLedger } from "./check-ledger.js";
import { registerConsole } from "./console.js";
import { registerCsvExports } from "./csv-exports.js";
import { registerCreateAccount } from "./create-account.js";
import { registerCreateKey } from "./create-key.js";
import { registerCreatePlan } from "./create-plan.js";
import { registerCreateAdjustment } from "./create-adjustment.js";
import { registerCreateTopUp } from "./create-top-up.js";
import { registerGetAccount } from "./get-account.js";
import { registerGetAccountUsage } from "./get-account-usage.js";
import { registerGetOverview } from "./get-overview.js";
import { registerGetTask } from "./get-task.js";
import type { AdminMemory } from "./last-check.js";
import { registerListAccounts } from "./list-accounts.js";
import { registerListAudit } from "./list-audit.js";
import { registerListLedger } from "./list-ledger.js";
import { registerListPlans } from "./list-plans.js";
import { registerListTasks } from "./list-tasks.js";
import { registerAdminOpenApi } from "./openapi.js";
import { registerRevokeKey } from "./revoke-key.js";
import type { AdminApi } from "./route.js";
import { registerSetAccountPlan } from "./set-account-plan.js";
import { registerUpdateKey } from "./update-key.js";
import { registerUpdatePlan } from "./update-plan.js";

export interface AdminDeps {
  /** The console's and admin API's bearer token; without it neither exists. */
  token: string;
  services: Services;
}

/** The admin API (/admin/v1/…) and the console (/console), invisible without the admin token. */
export function registerAdmin(app: App, deps: AdminDeps): void {
  // Registered before the admin routes, so it runs first for every path under /admin,
  // including unknown ones and /admin itself.
  app.use("/admin/*", adminOnly(deps.token, deps.services.adminTokens));
  // A plain Hono in between: OpenAPIHono.route would copy the admin paths into the public
  // document, which must not mention them.
  app.route("/", new Hono<AppEnv>().route("/", buildAdminApi(deps.services)));
  registerConsole(app);
}

/** Every admin endpoint, each in its own file, with its own OpenAPI document. */
export function buildAdminApi(services: Services): AdminApi {
  const api = new OpenAPIHono<AppEnv>();
  const memory: AdminMemory = {};
  registerGetOverview(api, services, memory);
  registerListPlans(api, services);
  registerCreatePlan(api, services);
  registerUpdatePlan(api, services);
  registerListAccounts(api, services);
  registerCreateAccount(api, services);
  registerGetAccount(api, services);
  registerGetAccountUsage(api, services);
  registerSetAccountPlan(api, services);
  registerCreateTopUp(api, services);
  registerCreateAdjustment(api, services);
  registerListLedger(api, services);
  registerCsvExports(api, services);
  registerCreateKey(api, services);
  registerRevokeKey(api, services);
  registerUpdateKey(api, services);
  registerCheckLedger(api, services, memory);
  registerAccountStatus(api, services);
  registerListAudit(api, services);
  registerAdminTokens(api, services);
  registerListTasks(api, services);
  registerGetTask(api, services);
  registerAdminOpenApi(api);
  return api;
}
