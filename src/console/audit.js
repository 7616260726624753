import { adminApi } from "./api.js";
import { byId, count, el, microEuros, whenParts } from "./dom.js";
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
      ? [
          "Actions concerning account ",
          el("a", { attrs: { href: accountLink(route.account) } }, route.account),
          " (its keys and balance included). ",
          el("a", { attrs: { href: auditLink() } }, "Every account"),
        ]
      : ["Every admin change, from the CLI, the admin API and this console, newest first."]),
  );
  byId("audit-newest").disabled = !route.before;
  byId("audit-older").disabled = nextBefore === null;
}

function auditRow(entry) {
  return el(
    "tr",
    {},
    el("td", { className: "when" }, whenParts(entry.at)),
    // Names and ids are kept whole; only the details are free text, broken anywhere when they must.
    el("td", {}, el("span", { className: "nowrap" }, entry.actor)),
    el("td", {}, entry.action),
    el("td", {}, objectCell(entry)),
    el("td", { className: "text" }, describe(entry.details)),
  );
}

function objectCell(entry) {
  const { kind, id } = entry.object;
  const target = kind === "account" ? el("a", { attrs: { href: accountLink(id) } }, id) : id;
  return [el("span", { className: "sub" }, kind), target];
}

/** What each kind of field holds, by its name as the store records it (snake_case or camelCase). */
const MICROS = /(_micro|Micro)$/;
const EPOCH_MS = /(_at|At)$/;
const LABELS = { price_per_million: "price per million tokens" };

/** "budget_micro" → "budget", "requestsPerMinute" → "requests per minute". */
const label = (field) =>
  LABELS[field] ??
  field
    .replace(MICROS, "")
    .replace(EPOCH_MS, "")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replaceAll("_", " ")
    .toLowerCase();

/** Amounts as money, instants as the console's times, counts with separators; text quoted, as typed. */
function shown(field, value) {
  if (typeof value === "number" && (MICROS.test(field) || field === "price_per_million")) return microEuros(value);
  if (typeof value === "number" && EPOCH_MS.test(field)) return whenParts(new Date(value).toISOString());
  if (value === null && (MICROS.test(field) || EPOCH_MS.test(field))) return "none";
  if (typeof value === "number") return /(^|_)(id|entry)$/.test(field) ? String(value) : count(value);
  return JSON.stringify(value);
}

/** `field: from → to` for changes, `field: value` otherwise, as text and (for times) nodes. */
function describe(details) {
  return Object.entries(details)
    .flatMap(([field, value], i) => [
      i ? ", " : null,
      `${label(field)}: `,
      value && typeof value === "object" && "from" in value && "to" in value ? [shown(field, value.from), " → ", shown(field, value.to)] : shown(field, value),
    ])
    .flat(Infinity);
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
