import { adminApi } from "./api.js";
import { byId, count, el, fillPlanSelects, money, shortDate, usageMeter, usageText } from "./dom.js";
import { accountLink, accountsLink, currentRoute } from "./route.js";

/** The accounts list (searched and paged by the admin API, one query a page) and the new-account form. */

export const ACCOUNTS_PAGE = 25;

export async function drawAccounts(route) {
  const query = new URLSearchParams({ limit: String(ACCOUNTS_PAGE), offset: String(route.offset) });
  if (route.search) query.set("search", route.search);
  const [{ plans }, page] = await Promise.all([adminApi("GET", "plans"), adminApi("GET", `accounts?${query}`)]);
  fillPlanSelects(plans);
  byId("account-search").value = route.search;
  const rows = page.accounts.map(accountRow);
  if (rows.length === 0) rows.push(emptyRow(route, page.total));
  byId("account-rows").replaceChildren(...rows);
  byId("accounts-range").textContent =
    page.accounts.length === 0 ? "" : `${count(page.offset + 1)}–${count(page.offset + page.accounts.length)} of ${count(page.total)}`;
  const prev = byId("accounts-prev");
  prev.disabled = page.offset === 0;
  prev.dataset.offset = String(Math.max(0, page.offset - ACCOUNTS_PAGE));
  const next = byId("accounts-next");
  next.disabled = page.next_offset === null;
  next.dataset.offset = String(page.next_offset ?? page.offset);
}

function emptyRow(route, total) {
  const text = route.search
    ? `No account matches “${route.search}”.`
    : total > 0
      ? `No accounts on this page: there are ${count(total)}.`
      : "No accounts yet: create one below.";
  return el("tr", {}, el("td", { attrs: { colspan: 5 }, className: "empty" }, text));
}

function accountRow(account) {
  const { usage } = account;
  const held = account.reserved_micro > 0 ? el("span", { className: "sub" }, `${money(account.reserved)} held`) : null;
  return el(
    "tr",
    {},
    el(
      "td",
      { className: "text" },
      el("a", { attrs: { href: accountLink(account.id) } }, account.name),
      account.disabled ? el("span", { className: "badge bad", attrs: { "data-testid": "disabled-badge" } }, "Disabled") : null,
      el("span", { className: "sub" }, account.id),
    ),
    el("td", { className: "text" }, account.plan.name),
    el("td", { className: "number" }, money(account.balance), held),
    el("td", { className: "usage" }, usageMeter(usage), el("span", {}, usageText(usage))),
    el("td", {}, shortDate(account.created_at)),
  );
}

/** `run` performs an action, then redraws the page from the server (see main.js). */
export function wireAccounts(run) {
  byId("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    go({ search: byId("account-search").value.trim(), offset: 0 }, run);
  });
  for (const id of ["accounts-prev", "accounts-next"]) {
    byId(id).addEventListener("click", (event) => go({ search: currentRoute().search, offset: Number(event.currentTarget.dataset.offset) }, run));
  }
  const form = byId("create-account-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run(async () => {
      const name = byId("new-account-name").value;
      const account = await adminApi("POST", "accounts", { name, plan: byId("new-account-plan").value });
      byId("new-account-name").value = "";
      // pushState, unlike assigning location.hash, fires no hashchange: one redraw, not two.
      history.pushState(null, "", accountLink(account.id));
      return { message: `Created account ${account.name}.`, at: byId("account-notes") };
    }, form);
  });
}

/** To another page or search: a new address (for Back and reloads), drawn once. */
function go(target, run) {
  const link = accountsLink(target);
  if (location.hash === link) run(async () => "");
  else location.hash = link; // the hashchange redraws
}
