import { createRoute, z } from "@hono/zod-openapi";
import type { Services } from "../../services/build.js";
import { MAX_LEDGER_PAGE } from "../../record-limits.js";
import { csv, LEDGER_CSV_HEADER, ledgerCsvRow, USAGE_CSV_HEADER, usageCsvRow } from "../../views/csv.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryOr404 } from "./account-summary.js";
import { AccountIdParams } from "./get-account.js";
import { readQuery, wholeNumberParam } from "./input.js";
import { KindParam } from "./ledger-filter.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { DAY_MS } from "../../money/periods.js";

/**
 * CSV downloads for spreadsheets and accounting: an account's ledger (the same kinds filter as
 * the JSON list) and judgments per account and UTC day. Money is in two columns, exact µ€ and
 * exact decimal euros; times are ISO 8601 UTC.
 */

const MAX_DAYS = 366;

const csvResponse = (description: string) => ({
  description,
  headers: requestIdHeader,
  content: { "text/csv": { schema: z.string().openapi({ description: "RFC 4180 CSV with a header row, UTF-8, CRLF line ends." }) } },
});

const ledgerRoute = createRoute({
  method: "get",
  path: "/admin/v1/accounts/{id}/ledger.csv",
  summary: "An account's whole ledger as CSV, newest first, of some kinds or all",
  security: ADMIN_SECURITY,
  request: { params: AccountIdParams, query: z.object({ kind: KindParam }) },
  responses: {
    200: csvResponse("Columns: id, at, kind, amount_micro, amount_eur, questions, input_tokens, period_start, request_id, key_id, key_prefix, key_name, note."),
    ...adminErrors("No such account (account_not_found).", { 400: "kind is not a known kind." }),
  },
});

const UsageQuery = z.object({
  days: wholeNumberParam(1, MAX_DAYS, `How many UTC days, ending today: 1 to ${MAX_DAYS}, 30 by default.`),
  account: z.string().optional().openapi({ description: "Only this account (acct_…); every account when absent." }),
});

const usageRoute = createRoute({
  method: "get",
  path: "/admin/v1/usage.csv",
  summary: "Judgments per account and UTC day as CSV (every account, or one)",
  security: ADMIN_SECURITY,
  request: { query: UsageQuery },
  responses: {
    200: csvResponse(
      "Columns: date, account_id, account_name, requests, questions, input_tokens, charged_micro, charged_eur. Days on which an account made no judgment have no row.",
    ),
    ...adminErrors("No such account (account_not_found), when account is given.", { 400: `days is not a whole number from 1 to ${MAX_DAYS}.` }),
  },
});

const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function download(body: string, filename: string) {
  return new Response(body, {
    status: 200,
    headers: { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="${filename}"`, "cache-control": "no-store" },
  });
}

export function registerCsvExports(api: AdminApi, services: Services, now: () => number = Date.now): void {
  addRoute(api, ledgerRoute, async (c) => {
    const { id } = (await summaryOr404(services, c.req.param("id")!)).account;
    const { kind } = readQuery(c, z.object({ kind: KindParam }));
    const rows = [];
    for (let before: number | undefined; ; ) {
      const page = await services.reports.ledgerPage(id, { limit: MAX_LEDGER_PAGE, before, kinds: kind });
      rows.push(...page.entries.map(ledgerCsvRow));
      if (page.nextBefore === null) break;
      before = page.nextBefore;
    }
    const kinds = kind ? `-${kind.join("-")}` : "";
    return download(csv(LEDGER_CSV_HEADER, rows), `ledger-${id}${kinds}-${stamp(now())}.csv`);
  });

  addRoute(api, usageRoute, async (c) => {
    const { days, account } = readQuery(c, UsageQuery);
    if (account !== undefined) await summaryOr404(services, account);
    const today = Math.floor(now() / DAY_MS) * DAY_MS;
    const range = { start: today - ((days ?? 30) - 1) * DAY_MS, end: today + DAY_MS };
    const usage = await services.reports.usageByAccountDay(range, account);
    return download(csv(USAGE_CSV_HEADER, usage.map(usageCsvRow)), `usage-${account ?? "all-accounts"}-${stamp(range.start)}-to-${stamp(today)}.csv`);
  });
}
