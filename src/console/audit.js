import { adminApi } from "./api.js";
import { byId, el, when } from "./dom.js";
import { accountLink, auditLink, currentRoute } from "./route.js";

/** The audit log of admin actions, newest first, 50 a page; of every account or of one. */

const AUDIT_PAGE = 50;
let nextBefore = null;

export async function drawAudit(route) {
  const query = new URLSearchParams({ limit: String(AUDIT_PAGE) });
  if (route.account) query.set("account", route.account);
  if (route.before) query.set("before", String(route.before));
  const page = await adminApi("GET", `audit?${query}`);
  nextBefore = page.next_before;
  const rows = page.entries.map(auditRow);
  if (rows.length === 0) rows.push(el("tr", {}, el("td", { attrs: { colspan: 5 }, className: "empty" }, "No admin actions recorded.")));
  byId("audit-rows").replaceChildren(...rows);
  const scope = byId("audit-scope");
  scope.replaceChildren(
    ...(route.account
      ? ["Actions concerning account ", el("a", { attrs: { href: accountLink(route.account) } }, route.account), " (its keys and balance included). ", el("a", { attrs: { href: auditLink() } }, "Every account")]
      : ["Every admin change, from the CLI, the admin API and this console, newest first."]),
  );
  byId("audit-newest").disabled = !route.before;
  byId("audit-older").disabled = nextBefore === null;
}

function auditRow(entry) {
  return el(
    "tr",
    {},
    el("td", {}, when(entry.at)),
    el("td", { className: "text" }, entry.actor),
    el("td", { className: "text" }, entry.action),
    el("td", { className: "text" }, objectCell(entry)),
    el("td", { className: "text" }, describe(entry.details)),
  );
}

function objectCell(entry) {
  const { kind, id } = entry.object;
  const target = kind === "account" ? el("a", { attrs: { href: accountLink(id) } }, id) : id;
  return [el("span", { className: "sub" }, kind), target];
}

/** `field: from → to` for changes, `field: value` otherwise; values as JSON, shown as text. */
function describe(details) {
  return Object.entries(details)
    .map(([field, value]) =>
      value && typeof value === "object" && "from" in value && "to" in value
        ? `${field}: ${JSON.stringify(value.from)} → ${JSON.stringify(value.to)}`
        : `${field}: ${JSON.stringify(value)}`,
    )
    .join(", ");
}

export function wireAudit(run) {
  const go = (before) => {
    const link = auditLink({ account: currentRoute().account, before });
    if (location.hash === link) run(async () => "");
    else location.hash = link;
  };
  byId("audit-newest").addEventListener("click", () => go(undefined));
  byId("audit-older").addEventListener("click", () => go(nextBefore));
}
