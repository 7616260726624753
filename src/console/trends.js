import { adminDownload } from "./api.js";
import { barChart } from "./chart.js";
import { byId, count, el, money, numberCell, plural, when } from "./dom.js";
import { accountLink } from "./route.js";

/**
 * The overview's last 30 days (GET /admin/v1/overview): requests, questions, euros charged and
 * server errors per UTC day as bar charts, the busiest accounts, and the latest server errors
 * any instance recorded. µ€ past 2^53 arrive rounded in a JSON number: they only size bars here;
 * every figure shown is the exact euro string.
 */

/** How the busiest accounts are ranked: kept while the console is open. */
let busiestBy = "charged";

export const busiestQuery = () => `busiest_by=${busiestBy}`;

export function drawTrends(overview) {
  const { days } = overview;
  const span = { days, period_start: days[0].date, period_end: days.at(-1).date };
  const chart = (title, kind, value, describe, top) =>
    barChart({ title, kind, usage: span, slots: days.length, value, describe, top, testId: `trend-${kind}` });
  const most = (value) => Math.max(0, ...days.map(value));
  const busiestCharge = days.reduce((best, day) => (day.charged_micro > (best?.charged_micro ?? 0) ? day : best), null);
  byId("trend-charts").replaceChildren(
    chart(
      "Requests per day",
      "requests",
      (day) => day.requests,
      (day) => plural(day.requests, "request"),
      count(most((day) => day.requests)),
    ),
    chart(
      "Questions per day",
      "questions",
      (day) => day.questions,
      (day) => plural(day.questions, "question"),
      count(most((day) => day.questions)),
    ),
    chart(
      "Euros charged per day",
      "euros",
      (day) => day.charged_micro,
      (day) => money(day.charged),
      money(busiestCharge?.charged ?? "0.00"),
    ),
    chart(
      "Server errors per day",
      "errors",
      (day) => day.server_errors,
      (day) => plural(day.server_errors, "server error"),
      count(most((day) => day.server_errors)),
    ),
  );
  const sum = (field) => days.reduce((total, day) => total + day[field], 0);
  byId("trend-totals").textContent =
    `${plural(sum("requests"), "request")}, ${plural(sum("questions"), "question")}, ${plural(sum("server_errors"), "server error")} in the last ${plural(days.length, "day")}.`;
  byId("busiest-by").value = overview.busiest_by;
  byId("busiest-rows").replaceChildren(
    ...(overview.busiest_accounts.length ? overview.busiest_accounts.map(busyRow) : [emptyRow(4, "No judgments in the last 30 days.")]),
  );
  byId("server-error-rows").replaceChildren(
    ...(overview.server_errors.length ? overview.server_errors.map(errorRow) : [emptyRow(5, "No server errors recorded.")]),
  );
}

const emptyRow = (columns, text) => el("tr", {}, el("td", { attrs: { colspan: columns }, className: "empty" }, text));

function busyRow(account) {
  return el(
    "tr",
    {},
    el(
      "td",
      { className: "text" },
      el("a", { attrs: { href: accountLink(account.account_id) } }, account.name),
      el("span", { className: "sub" }, account.account_id),
    ),
    numberCell(account.requests),
    numberCell(account.questions),
    numberCell(account.charged),
  );
}

function errorRow(error) {
  return el(
    "tr",
    {},
    el("td", {}, when(error.at)),
    el("td", { className: "text" }, `${error.method} ${error.route}`),
    numberCell(error.status),
    el("td", {}, error.code ?? "—"),
    el("td", { className: "text" }, el("code", {}, error.request_id ?? "—")),
  );
}

export function wireTrends(run) {
  byId("busiest-by").addEventListener("change", () =>
    run(async () => {
      busiestBy = byId("busiest-by").value;
    }, byId("busiest")),
  );
  const usage = byId("download-usage");
  usage.addEventListener("click", () => run(async () => `Downloaded ${await adminDownload("usage.csv?days=30")}.`, byId("trend-downloads")));
}
