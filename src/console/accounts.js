import { adminApi } from "./api.js";
import { byId, el, money, numberCell } from "./dom.js";

/** The accounts table and the new-account form. */

export const accountLink = (id) => `#account=${encodeURIComponent(id)}`;

export function selectedAccountId() {
  return new URLSearchParams(location.hash.slice(1)).get("account");
}

export function renderAccounts(accounts) {
  byId("account-rows").replaceChildren(...accounts.map(accountRow));
}

function accountRow(account) {
  const { usage } = account;
  return el(
    "tr",
    {},
    el("td", {}, el("a", { attrs: { href: accountLink(account.id) } }, account.name)),
    el("td", {}, account.plan.name),
    numberCell(money(account.balance)),
    numberCell(`${usage.percent_used}% (${usage.used + usage.reserved} of ${usage.allowance})`),
  );
}

/** `run` performs an action, then redraws the page from the server (see main.js). */
export function wireAccounts(run) {
  byId("create-account-form").addEventListener("submit", (event) => {
    event.preventDefault();
    run(async () => {
      const name = byId("new-account-name").value;
      const account = await adminApi("POST", "accounts", { name, plan: byId("new-account-plan").value });
      byId("new-account-name").value = "";
      // pushState, unlike assigning location.hash, fires no hashchange: one redraw, not two.
      history.pushState(null, "", accountLink(account.id));
      return `Created account ${account.name}.`;
    });
  });
}
