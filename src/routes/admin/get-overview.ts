import { createRoute, z } from "@hono/zod-openapi";
import { formatEuros } from "../../money/money.js";
import type { Services } from "../../services/build.js";
import type { Overview } from "../../services/accounts.js";
import { requestIdHeader } from "../shared.schema.js";
import { asNumberIfExact, exactJson } from "./exact-json.js";
import { readQuery } from "./input.js";
import { BusiestQuery, TrendFields, trends } from "./overview-trends.js";
import { httpCounts } from "./http-counts.js";
import type { AdminMemory } from "./last-check.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";

const iso = (ms: number) => new Date(ms).toISOString();
const count = (description: string) => z.number().int().openapi({ description });

const Activity = z
  .object({
    start: z.string(),
    end: z.string(),
    requests: count("Judgment requests settled (each one ledger entry; refused requests are not in the ledger)."),
    questions: count("Questions answered."),
    input_tokens: count("Input tokens read and billed."),
    charged_micro: count(
      "Charged to prepaid balances, in micro-euros: an exact JSON integer, which may pass 2^53 (read it with a BigInt-aware parser, or read `charged`).",
    ),
    charged: z.string().openapi({ description: "Charged to prepaid balances, exact decimal euros.", example: "12.50" }),
    topped_up_micro: count(
      "Top-ups received, in micro-euros: an exact JSON integer, which may pass 2^53 (read it with a BigInt-aware parser, or read `topped_up`).",
    ),
    topped_up: z.string().openapi({ description: "Top-ups received, exact decimal euros.", example: "100.00" }),
  })
  .openapi("AdminActivity", { description: "Every account's ledger entries from start (included) to end (excluded)." });

const OverviewView = z
  .object({
    accounts: count("Accounts in all."),
    today: Activity.openapi({ description: "Since 00:00 UTC today." }),
    month: Activity.openapi({ description: "Since the first of this month, 00:00 UTC." }),
    http: z
      .object({
        since: z.string().nullable().openapi({ description: "When this instance started: the counts are its own since then." }),
        requests: count("Requests answered by this instance, the admin API and console excluded."),
        status_2xx: z.number().int(),
        status_4xx: count("Refusals: bad input, unknown or revoked keys (401), insufficient funds (402), rate limits (429), unknown paths."),
        status_5xx: z.number().int(),
      })
      .openapi({ description: "This instance's own counters (as GET /metrics has them): behind a load balancer, each instance counts its own." }),
    ledger_check: z
      .object({ checked_at: z.string(), ok: z.boolean(), accounts: z.number().int(), mismatches: z.number().int() })
      .nullable()
      .openapi({ description: "The last GET /admin/v1/ledger/check this instance ran; null when it ran none since it started." }),
    ...TrendFields,
  })
  .openapi("AdminOverview");

const route = createRoute({
  method: "get",
  path: "/admin/v1/overview",
  summary: "Today, this month and the last 30 days across all accounts, the busiest accounts, recent server errors, the last ledger check",
  security: ADMIN_SECURITY,
  request: { query: BusiestQuery },
  responses: {
    200: { description: "The overview.", headers: requestIdHeader, content: { "application/json": { schema: OverviewView } } },
    ...adminErrors("", { 400: "busiest_by is neither charged nor requests." }),
  },
});

const activityView = (activity: Overview["today"]): z.infer<typeof Activity> => ({
  start: iso(activity.start),
  end: iso(activity.end),
  requests: activity.requests,
  questions: activity.questions,
  input_tokens: activity.inputTokens,
  charged_micro: asNumberIfExact(activity.chargedMicro),
  charged: formatEuros(activity.chargedMicro),
  topped_up_micro: asNumberIfExact(activity.toppedUpMicro),
  topped_up: formatEuros(activity.toppedUpMicro),
});

export function registerGetOverview(api: AdminApi, services: Services, memory: AdminMemory): void {
  addRoute(api, route, async (c) => {
    const { busiest_by } = readQuery(c, BusiestQuery);
    const [overview, http, trend] = await Promise.all([
      services.accounts.overview(),
      httpCounts(services.metrics),
      trends(services, Date.now(), busiest_by ?? "charged"),
    ]);
    const last = memory.lastLedgerCheck;
    const body: z.infer<typeof OverviewView> = {
      accounts: overview.accounts,
      today: activityView(overview.today),
      month: activityView(overview.month),
      http: {
        since: http.since === null ? null : iso(http.since),
        requests: http.requests,
        status_2xx: http.status2xx,
        status_4xx: http.status4xx,
        status_5xx: http.status5xx,
      },
      ledger_check: last ? { checked_at: iso(last.at), ok: last.check.ok, accounts: last.check.accounts, mismatches: last.check.mismatches.length } : null,
      ...trend,
    };
    return c.body(exactJson(body), 200, { "content-type": "application/json" });
  });
}
