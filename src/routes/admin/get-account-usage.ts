import { createRoute, z } from "@hono/zod-openapi";
import { formatEuros } from "../../money/money.js";
import type { Services } from "../../services/build.js";
import type { DailyUsage } from "../../services/types.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryOr404 } from "./account-summary.js";
import { AccountIdParams } from "./get-account.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { DAY_MS } from "../../money/periods.js";

const Judgments = {
  requests: z.number().int().openapi({ description: "Judgment requests settled (refused ones are not in the ledger)." }),
  questions: z.number().int(),
  input_tokens: z.number().int(),
  charged_micro: z.number().int().openapi({ description: "Charged to the balance, in micro-euros (plan-paid questions cost 0)." }),
  charged: z.string().openapi({ description: "Charged to the balance, exact decimal euros.", example: "0.42" }),
};

const UsageByDay = z
  .object({
    period_start: z.string(),
    period_end: z.string(),
    days_in_period: z.number().int().openapi({ description: "How many UTC days the period touches: the width of a whole-period chart." }),
    days: z
      .array(z.object({ date: z.string().openapi({ example: "2026-01-31" }), ...Judgments }))
      .openapi({ description: "Every UTC day from the period's first to today (the first one partial), days without judgments included." }),
    totals: z.object(Judgments).openapi({ description: "The sums over `days`." }),
    by_model: z
      .array(
        z.object({
          model: z.string().nullable().openapi({ description: "The served model's id (JUDGE_MODELS); null for judgments recorded before models were." }),
          ...Judgments,
        }),
      )
      .openapi({
        description:
          "The period's judgments by the model that answered; `questions` are allowance units (questions × the model's price_multiplier, rounded up).",
      }),
  })
  .openapi("AdminUsageByDay");

const route = createRoute({
  method: "get",
  path: "/admin/v1/accounts/{id}/usage",
  summary: "An account's judgments of the current period, day by day (UTC): questions and euros",
  security: ADMIN_SECURITY,
  request: { params: AccountIdParams },
  responses: {
    200: { description: "The current period, day by day.", headers: requestIdHeader, content: { "application/json": { schema: UsageByDay } } },
    ...adminErrors("No such account (account_not_found)."),
  },
});

const judgments = (day: Pick<DailyUsage, "requests" | "questions" | "inputTokens" | "chargedMicro">) => ({
  requests: day.requests,
  questions: day.questions,
  input_tokens: day.inputTokens,
  charged_micro: day.chargedMicro,
  charged: formatEuros(day.chargedMicro),
});

export function registerGetAccountUsage(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const { account } = await summaryOr404(services, c.req.param("id")!);
    const { period, now, days, models } = await services.accounts.usageByDay(account);
    const byDay = new Map(days.map((day) => [day.day, day]));
    const first = Math.floor(period.start / DAY_MS) * DAY_MS;
    const last = Math.floor((period.end - 1) / DAY_MS) * DAY_MS;
    const dense = [];
    for (let day = first; day <= Math.min(last, now); day += DAY_MS) {
      dense.push({
        date: new Date(day).toISOString().slice(0, 10),
        ...judgments(byDay.get(day) ?? { requests: 0, questions: 0, inputTokens: 0, chargedMicro: 0 }),
      });
    }
    const sum = (field: "requests" | "questions" | "inputTokens" | "chargedMicro") => days.reduce((total, day) => total + day[field], 0);
    return c.json(
      {
        period_start: new Date(period.start).toISOString(),
        period_end: new Date(period.end).toISOString(),
        days_in_period: (last - first) / DAY_MS + 1,
        days: dense,
        totals: judgments({ requests: sum("requests"), questions: sum("questions"), inputTokens: sum("inputTokens"), chargedMicro: sum("chargedMicro") }),
        by_model: models.map((m) => ({ model: m.model, ...judgments(m) })),
      },
      200,
    );
  });
}
