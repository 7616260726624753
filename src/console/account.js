import { adminApi, path } from "./api.js";
import { byId, el, money, numberCell, when } from "./dom.js";

/** One account: facts, plan, top-up, keys (created, shown once, revoked) and recent ledger. */

let current = null;
/** A key just created: shown by the next redraw only, then forgotten. */
let justCreated = null;

export function renderAccount(detail) {
  current = detail.account;
  const { account, plan } = detail;
  byId("account").hidden = false;
  byId("account-heading").textContent = account.name;
  document.querySelector('[data-testid="account-id"]').textContent = account.id;
  document.querySelector('[data-testid="account-plan"]').textContent = plan.name;
  document.querySelector('[data-testid="balance"]').textContent = balanceText(account);
  document.querySelector('[data-testid="usage"]').textContent = usageText(account.usage);
  document.querySelector('[data-testid="period"]').textContent = `${when(account.usage.period_start)} to ${when(account.usage.period_end)}`;
  byId("account-plan-select").value = plan.id;
  byId("key-rows").replaceChildren(...detail.keys.map(keyRow));
  byId("ledger-rows").replaceChildren(...detail.ledger.map(ledgerRow));
  showNewKey(justCreated?.accountId === account.id ? justCreated.key : null);
  justCreated = null;
}

export function hideAccount() {
  current = null;
  byId("account").hidden = true;
  showNewKey(null);
}

function balanceText(account) {
  const held = account.reserved_micro > 0 ? ` (${money(account.reserved)} held by requests in flight)` : "";
  return money(account.balance) + held;
}

function usageText(usage) {
  const inFlight = usage.reserved > 0 ? ` + ${usage.reserved} in flight` : "";
  return `${usage.used}${inFlight} of ${usage.allowance} questions (${usage.percent_used}%)`;
}

function keyRow(key) {
  const action = key.revoked_at
    ? ""
    : el("button", { attrs: { type: "button", "aria-label": `Revoke key ${key.prefix}` }, on: { click: () => revoke(key) } }, "Revoke");
  return el(
    "tr",
    { className: key.revoked_at ? "revoked" : "" },
    el("td", {}, el("code", {}, `${key.prefix}…`)),
    el("td", {}, key.name ?? ""),
    el("td", {}, when(key.created_at)),
    el("td", {}, when(key.last_used_at)),
    el("td", {}, key.revoked_at ? `revoked ${when(key.revoked_at)}` : "active"),
    el("td", {}, action),
  );
}

const KIND_LABELS = { top_up: "top-up", charge: "charge", plan: "plan allowance", adjustment: "adjustment" };

function ledgerRow(entry) {
  return el(
    "tr",
    {},
    el("td", {}, when(entry.at)),
    el("td", {}, KIND_LABELS[entry.kind] ?? entry.kind),
    numberCell(entry.amount),
    numberCell(entry.questions),
    numberCell(entry.input_tokens),
    el("td", {}, entry.note ?? ""),
  );
}

function showNewKey(key) {
  byId("new-key").textContent = key ?? "";
  byId("new-key-box").hidden = key === null;
}

let runAction;

function revoke(key) {
  if (!confirm(`Revoke key ${key.prefix}…? Requests with it get 401 from now on.`)) return;
  runAction(async () => {
    await adminApi("POST", path`keys/${key.id}/revoke`);
    return `Revoked key ${key.prefix}…`;
  });
}

export function wireAccount(run) {
  runAction = run;
  onSubmit("set-plan-form", async () => {
    const account = await adminApi("PUT", path`accounts/${current.id}/plan`, { plan: byId("account-plan-select").value });
    return `${account.name} is now on plan ${account.plan.name}.`;
  });
  onSubmit("top-up-form", async () => {
    const note = byId("top-up-note").value.trim();
    const body = { amount: byId("top-up-amount").value.trim(), ...(note ? { note } : {}) };
    const result = await adminApi("POST", path`accounts/${current.id}/top-ups`, body);
    byId("top-up-amount").value = "";
    byId("top-up-note").value = "";
    return `Added ${money(result.entry.amount)}; the balance is ${money(result.balance)}.`;
  });
  onSubmit("create-key-form", async () => {
    const name = byId("new-key-name").value.trim();
    const created = await adminApi("POST", path`accounts/${current.id}/keys`, name ? { name } : {});
    byId("new-key-name").value = "";
    justCreated = { accountId: current.id, key: created.key };
    return `Created key ${created.prefix}…; copy it now.`;
  });
  byId("refresh-account").addEventListener("click", () => run(async () => "Refreshed."));
  byId("copy-key").addEventListener("click", copyKey);
  byId("dismiss-key").addEventListener("click", () => showNewKey(null));
}

function onSubmit(formId, action) {
  byId(formId).addEventListener("submit", (event) => {
    event.preventDefault();
    runAction(action);
  });
}

async function copyKey() {
  const code = byId("new-key");
  try {
    await navigator.clipboard.writeText(code.textContent);
    byId("status").textContent = "Key copied to the clipboard.";
  } catch {
    // No clipboard API outside secure contexts (plain http on another host): select it instead.
    getSelection().selectAllChildren(code);
    byId("status").textContent = "Key selected: press Ctrl+C (⌘C on a Mac) to copy it.";
  }
}
