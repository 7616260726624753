import { adminApi, serviceHealth } from "./api.js";
import { byId, byTestId, count, el, money, numberCell, plural, setFacts, when } from "./dom.js";
import { accountLink } from "./route.js";
import { busiestQuery, drawTrends, wireTrends } from "./trends.js";

/**
 * The overview: the model and engine (GET /health), today's and this month's judgments and
 * money, this instance's response counts, and the ledger check (GET /admin/v1/overview).
 */

/** The mismatches of the check run from this page, which the overview only counts. */
let lastRun = null;

export async function drawOverview() {
  const [overview, health] = await Promise.all([adminApi("GET", `overview?${busiestQuery()}`), serviceHealth()]);
  drawHealth(health);
  drawActivity(byId("today-facts"), overview.today, "today");
  drawActivity(byId("month-facts"), overview.month, "month");
  byId("month-facts").append(el("dt", {}, "Accounts"), el("dd", { attrs: { "data-testid": "accounts-count" } }, count(overview.accounts)));
  const { http } = overview;
  setFacts(byId("http-facts"), [
    ["Since", when(http.since)],
    ["Requests", count(http.requests), "http-requests"],
    ["Client errors (4xx)", count(http.status_4xx), "http-4xx"],
    ["Server errors (5xx)", count(http.status_5xx), "http-5xx"],
  ]);
  drawLedgerCheck(overview.ledger_check);
  drawTrends(overview);
}

const HEALTH = {
  ok: ["Ready", "ok"],
  loading: ["Loading the model", "warn"],
  failed: ["Model failed", "bad"],
  unavailable: ["A part is down", "bad"],
};

function drawHealth(health) {
  const [label, tone] = HEALTH[health.status] ?? ["Unknown", "bad"];
  setBadge(byTestId("health-status"), label, tone);
  const rows = [];
  if (health.model) rows.push(["Model", health.model, "health-model"]);
  if (health.engine) {
    rows.push(["Engine", `${health.engine.kind} on ${health.engine.backend}`, "health-engine"]);
    if (health.engine.slots !== undefined) rows.push(["Cached states (slots)", count(health.engine.slots)]);
  }
  for (const part of Object.values(health.parts ?? {})) rows.push([part.name, part.ok ? "ok" : `down: ${part.detail ?? ""}`]);
  if (health.error) rows.push(["Why", health.error]);
  setFacts(byId("health-facts"), rows);
}

function drawActivity(dl, activity, prefix) {
  setFacts(dl, [
    ["Requests answered", count(activity.requests), `${prefix}-requests`],
    ["Questions answered", count(activity.questions), `${prefix}-questions`],
    ["Input tokens", count(activity.input_tokens)],
    ["Charged to balances", money(activity.charged), `${prefix}-charged`],
    ["Topped up", money(activity.topped_up), `${prefix}-topped-up`],
  ]);
}

function drawLedgerCheck(check) {
  const status = byTestId("ledger-check-status");
  if (!check) setBadge(status, "Not run on this instance since it started", "neutral");
  else if (check.ok) setBadge(status, `Consistent: ${plural(check.accounts, "account")}, checked ${when(check.checked_at)}`, "ok");
  else setBadge(status, `${plural(check.mismatches, "mismatch", "es")} in ${plural(check.accounts, "account")}, checked ${when(check.checked_at)}`, "bad");
  const mismatches = lastRun?.mismatches ?? [];
  byId("mismatches").hidden = mismatches.length === 0;
  byId("mismatch-rows").replaceChildren(...mismatches.map(mismatchRow));
}

const UNITS = { micro_eur: "µ€", questions: "questions" };

function mismatchRow(mismatch) {
  const unit = UNITS[mismatch.unit] ?? mismatch.unit;
  return el(
    "tr",
    {},
    el("td", {}, el("a", { attrs: { href: accountLink(mismatch.account_id) } }, mismatch.account_id)),
    el("td", {}, mismatch.what),
    numberCell(`${count(mismatch.column)} ${unit}`),
    numberCell(`${count(mismatch.ledger_sum)} ${unit}`),
  );
}

function setBadge(node, text, tone) {
  node.textContent = text;
  node.className = `badge ${tone}`;
}

export function wireOverview(run) {
  wireTrends(run);
  const button = byId("run-ledger-check");
  button.addEventListener("click", () =>
    run(async () => {
      button.disabled = true;
      try {
        lastRun = await adminApi("GET", "ledger/check");
      } finally {
        button.disabled = false;
      }
      return lastRun.ok
        ? `Every balance and usage agrees with the ledger (${plural(lastRun.accounts, "account")}).`
        : "The ledger check found mismatches: see the table.";
    }, byId("ledger-check")),
  );
}
