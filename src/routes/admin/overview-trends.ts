import { z } from "@hono/zod-openapi";
import { formatEuros } from "../../money/money.js";
import type { Services } from "../../services/build.js";
import { asNumberIfExact } from "./exact-json.js";
import { DAY_MS } from "../../money/periods.js";

/**
 * The overview's last 30 days: every account's judgments, money and server errors by UTC day,
 * the busiest accounts over those days, and the most recent server errors. Money sums across
 * accounts may pass 2^53 µ€: each µ€ figure is a JSON number where exact, past that an exact
 * integer literal (exactJson), and always also an exact decimal euro string.
 */

export const TREND_DAYS = 30;
export const BUSIEST_ACCOUNTS = 10;
export const RECENT_SERVER_ERRORS = 20;

const count = (description: string) => z.number().int().openapi({ description });
const exactMicro = (what: string) =>
  count(
    `${what}, in micro-euros: a JSON number while below 2^53, past it an exact integer literal (read it with a BigInt-aware parser, or read the euro string).`,
  );

const Day = z.object({
  date: z.string().openapi({ example: "2026-01-31" }),
  requests: count("Judgment requests settled."),
  questions: count("Questions answered."),
  input_tokens: z.number().int(),
  charged_micro: exactMicro("Charged to balances"),
  charged: z.string().openapi({ description: "Charged to balances, exact decimal euros." }),
  topped_up_micro: exactMicro("Top-ups received"),
  topped_up: z.string(),
  server_errors: count("5xx responses recorded by every instance (GET /health and /metrics excepted)."),
});

const BusyAccount = z.object({
  account_id: z.string(),
  name: z.string(),
  requests: z.number().int(),
  questions: z.number().int(),
  charged_micro: exactMicro("Charged over the 30 days"),
  charged: z.string(),
});

const ServerErrorView = z.object({
  at: z.string(),
  method: z.string(),
  route: z.string().openapi({ description: 'The matched route pattern ("unmatched" for none), never the raw path.' }),
  status: z.number().int(),
  code: z.string().nullable().openapi({ description: "The error catalogue's code, when the response had one." }),
  request_id: z.string().nullable().openapi({ description: "The X-Request-Id of the response: find its access-log line with it." }),
});

export const TrendFields = {
  days: z.array(Day).openapi({ description: `The last ${TREND_DAYS} UTC days, oldest first, today last (so far), days without activity included.` }),
  busiest_by: z.enum(["charged", "requests"]),
  busiest_accounts: z
    .array(BusyAccount)
    .openapi({ description: `At most ${BUSIEST_ACCOUNTS} accounts with the most charged (or requests, by busiest_by) over the same ${TREND_DAYS} days.` }),
  server_errors: z.array(ServerErrorView).openapi({
    description: `The latest ${RECENT_SERVER_ERRORS} 5xx responses of any instance (recorded in the database, best effort: one the database could not take is only in the access log).`,
  }),
};

export const BusiestQuery = z.object({
  busiest_by: z.enum(["charged", "requests"]).optional().openapi({ description: "Rank the busiest accounts by euros charged (default) or by requests." }),
});

const money = (micro: bigint) => ({ micro: asNumberIfExact(micro), euros: formatEuros(micro) });

export async function trends(services: Services, now: number, by: "charged" | "requests") {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const range = { start: today - (TREND_DAYS - 1) * DAY_MS, end: today + DAY_MS };
  const { reports } = services;
  const [activity, errors, busiest, recent] = await Promise.all([
    reports.activityByDay(range),
    reports.serverErrorsByDay(range),
    reports.busiestAccounts(range, by, BUSIEST_ACCOUNTS),
    reports.recentServerErrors(RECENT_SERVER_ERRORS),
  ]);
  const byDay = new Map(activity.map((day) => [day.day, day]));
  const errorsByDay = new Map(errors.map((day) => [day.day, day.errors]));
  const days = [];
  for (let day = range.start; day < range.end; day += DAY_MS) {
    const found = byDay.get(day);
    const charged = money(found?.chargedMicro ?? 0n);
    const toppedUp = money(found?.toppedUpMicro ?? 0n);
    days.push({
      date: new Date(day).toISOString().slice(0, 10),
      requests: found?.requests ?? 0,
      questions: found?.questions ?? 0,
      input_tokens: found?.inputTokens ?? 0,
      charged_micro: charged.micro,
      charged: charged.euros,
      topped_up_micro: toppedUp.micro,
      topped_up: toppedUp.euros,
      server_errors: errorsByDay.get(day) ?? 0,
    });
  }
  return {
    days,
    busiest_by: by,
    busiest_accounts: busiest.map((account) => {
      const charged = money(account.chargedMicro);
      return {
        account_id: account.accountId,
        name: account.name,
        requests: account.requests,
        questions: account.questions,
        charged_micro: charged.micro,
        charged: charged.euros,
      };
    }),
    server_errors: recent.map((error) => ({
      at: new Date(error.at).toISOString(),
      method: error.method,
      route: error.route,
      status: error.status,
      code: error.code,
      request_id: error.requestId,
    })),
  };
}
