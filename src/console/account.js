import { adminApi, path } from "./api.js";
import { usageChart } from "./chart.js";
import { byId, byTestId, fillPlanSelects, money, usageText, when } from "./dom.js";
import { auditLink } from "./route.js";
import { drawKeys, wireKeys } from "./keys.js";
import { drawLedger, ledgerQuery, showNewestLedger, wireLedger } from "./ledger.js";
import { modelUsageTable } from "./models.js";
import { drawAccountTasks } from "./tasks.js";

export { hideNewKey } from "./keys.js";

/** One account: facts, usage chart, plan, top-up, keys (created, shown once, revoked), tasks and ledger pages. */

let current = null;

export async function drawAccount(route) {
  const id = route.id;
  const [detail, usage, ledger, { plans }, { tasks }] = await Promise.all([
    adminApi("GET", path`accounts/${id}`),
    adminApi("GET", path`accounts/${id}/usage`),
    adminApi("GET", `${path`accounts/${id}/ledger`}?${ledgerQuery(id)}`),
    adminApi("GET", "plans"),
    adminApi("GET", path`accounts/${id}/tasks`),
  ]);
  current = detail.account;
  const { account, plan } = detail;
  fillPlanSelects(plans);
  byId("account-heading").textContent = account.name;
  byTestId("account-id").textContent = account.id;
  drawStatus(account);
  byTestId("account-plan").textContent = plan.name;
  byTestId("balance").textContent = balanceText(account);
  byTestId("usage").textContent = usageText(account.usage);
  byTestId("period").textContent = `${when(account.usage.period_start)} to ${when(account.usage.period_end)}`;
  byId("account-plan-select").value = plan.id;
  byId("usage-chart").replaceChildren(...usageChart(usage), ...modelUsageTable(usage.by_model));
  drawKeys(account.id, detail.keys);
  drawLedger(id, ledger);
  drawAccountTasks(account.id, tasks);
}

function drawStatus(account) {
  byTestId("account-status").textContent = account.disabled ? `Disabled since ${when(account.disabled_at)}: its keys get 401 account_disabled` : "Active";
  byId("status-hint").textContent = account.disabled
    ? "Enabling restores its keys (those not revoked)."
    : "Disabling refuses every key of the account at once, on every instance; nothing is deleted.";
  byId("toggle-disabled").textContent = account.disabled ? "Enable account" : "Disable account";
  byId("account-new-name").value = account.name;
  byId("account-audit-link").setAttribute("href", auditLink({ account: account.id }));
}

function balanceText(account) {
  const held = account.reserved_micro > 0 ? ` (${money(account.reserved)} held by requests in flight)` : "";
  return money(account.balance) + held;
}

export function wireAccount(run) {
  onSubmit(run, "set-plan-form", async () => {
    const account = await adminApi("PUT", path`accounts/${current.id}/plan`, { plan: byId("account-plan-select").value });
    return `${account.name} is now on plan ${account.plan.name}.`;
  });
  onSubmit(run, "top-up-form", async () => {
    const note = byId("top-up-note").value.trim();
    const body = { amount: byId("top-up-amount").value.trim(), ...(note ? { note } : {}) };
    const result = await adminApi("POST", path`accounts/${current.id}/top-ups`, body);
    byId("top-up-amount").value = "";
    byId("top-up-note").value = "";
    showNewestLedger();
    return `Added ${money(result.entry.amount)}; the balance is ${money(result.balance)}.`;
  });
  onSubmit(run, "rename-form", async () => {
    const account = await adminApi("PATCH", path`accounts/${current.id}`, { name: byId("account-new-name").value });
    return `Renamed to ${account.name}.`;
  });
  onSubmit(run, "status-form", async () => {
    const verb = current.disabled ? "enable" : "disable";
    const account = await adminApi("POST", `${path`accounts/${current.id}`}/${verb}`);
    return account.disabled ? `${account.name} is disabled: its keys are refused.` : `${account.name} is enabled again.`;
  });
  byId("refresh-account").addEventListener("click", () => run(async () => "Refreshed.", byId("account-notes")));
  wireKeys(run, () => current);
  wireLedger(run);
}

function onSubmit(run, formId, action) {
  const form = byId(formId);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run(action, form);
  });
}
