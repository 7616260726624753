import { adminApi, path } from "./api.js";
import { byId, count, el, money, whenParts, wholeNumber } from "./dom.js";

/**
 * An account's API keys: created with limits of their own (the key shown once), listed with
 * their spend, limits and last use, edited (name and limits, with the same form) and revoked.
 */

/** A key just created: shown by the next redraw of its account only, then forgotten. */
let justCreated = null;
/** The key whose name and limits the form is editing, or null when it creates one. */
let editing = null;

export function drawKeys(accountId, keys) {
  if (editing && !keys.some((key) => key.id === editing.id)) stopEditing();
  const rows = keys.map(keyRow);
  if (rows.length === 0) rows.push(el("tr", {}, el("td", { attrs: { colspan: 8 }, className: "empty" }, "No keys yet.")));
  byId("key-rows").replaceChildren(...rows);
  showNewKey(justCreated?.accountId === accountId ? justCreated.key : null);
  justCreated = null;
}

export function hideNewKey() {
  justCreated = null;
  showNewKey(null);
  stopEditing();
}

function showNewKey(key) {
  byId("new-key-box").querySelector(".copied")?.remove();
  byId("new-key").textContent = key ?? "";
  byId("new-key-box").hidden = key === null;
}

let runAction;

const expired = (key) => key.expires_at !== null && Date.parse(key.expires_at) <= Date.now();

/** Each piece kept whole, the cell's line broken only between pieces. */
const pieces = (...parts) =>
  parts.flatMap((part, i) => [i ? " " : null, typeof part === "string" ? el("span", { className: "nowrap" }, part) : part]).flat(Infinity);

function status(key) {
  if (key.revoked_at) return pieces("revoked", whenParts(key.revoked_at));
  return expired(key) ? pieces(el("strong", { className: "nowrap" }, "expired"), whenParts(key.expires_at)) : "active";
}

/** "€1.20 of €5.00" with a budget (and what requests in flight hold), else what was spent. */
function spend(key) {
  const parts = [money(key.spent)];
  if (key.budget !== null) parts.push(`of ${money(key.budget)}`);
  if (key.held_micro > 0) parts.push(`(+${count(key.held_micro)} µ€ held)`);
  return pieces(...parts);
}

function limits(key) {
  const rpm = key.requests_per_minute === null ? null : `${count(key.requests_per_minute)}/min`;
  const expiry = key.expires_at !== null && !expired(key) ? ["expires", whenParts(key.expires_at)] : [];
  if (rpm === null && expiry.length === 0) return "plan's only";
  return pieces(...(rpm === null ? [] : [expiry.length ? `${rpm},` : rpm]), ...expiry);
}

function keyRow(key) {
  const actions = key.revoked_at
    ? ""
    : [
        el("button", { attrs: { type: "button", "aria-label": `Edit key ${key.prefix}` }, on: { click: () => startEditing(key) } }, "Edit"),
        " ",
        el("button", { attrs: { type: "button", "aria-label": `Revoke key ${key.prefix}` }, on: { click: () => revoke(key) } }, "Revoke"),
      ];
  return el(
    "tr",
    { className: key.revoked_at ? "revoked" : "" },
    el("td", {}, el("code", {}, `${key.prefix}…`)),
    el("td", { className: "text" }, key.name ?? ""),
    el("td", { className: "number", attrs: { "data-testid": `key-spend-${key.prefix}` } }, spend(key)),
    el("td", { attrs: { "data-testid": `key-limits-${key.prefix}` } }, limits(key)),
    el("td", { className: "when" }, whenParts(key.created_at)),
    el("td", { className: "when" }, key.last_used_at ? whenParts(key.last_used_at) : "never"),
    el("td", {}, status(key)),
    el("td", { className: "row-actions" }, actions),
  );
}

function revoke(key) {
  if (!confirm(`Revoke key ${key.prefix}…? Requests with it get 401 from now on.`)) return;
  runAction(async () => {
    await adminApi("POST", path`keys/${key.id}/revoke`);
    if (editing?.id === key.id) stopEditing();
    return `Revoked key ${key.prefix}…`;
  }, byId("keys"));
}

function startEditing(key) {
  editing = key;
  byId("key-form-heading").textContent = `Edit key ${key.prefix}`;
  byId("new-key-name").value = key.name ?? "";
  byId("new-key-rpm").value = key.requests_per_minute === null ? "" : String(key.requests_per_minute);
  byId("new-key-budget").value = key.budget ?? "";
  byId("new-key-expires").value = key.expires_at ?? "";
  byId("key-submit").textContent = `Save key ${key.prefix}`;
  byId("key-cancel").hidden = false;
  byId("new-key-name").focus();
}

function stopEditing() {
  editing = null;
  byId("create-key-form").reset();
  byId("key-form-heading").textContent = "New key";
  byId("key-submit").textContent = "Create key";
  byId("key-cancel").hidden = true;
}

/** The form's fields; an empty one is "none" (left out on create, cleared with null on edit). */
function keyFields() {
  const text = (id) => byId(id).value.trim();
  const rpm = text("new-key-rpm");
  return {
    name: text("new-key-name") || null,
    requests_per_minute: rpm === "" ? null : wholeNumber(byId("new-key-rpm"), "Key requests per minute"),
    // Euro strings and instants are checked exactly by the server: the console does no arithmetic on them.
    budget: text("new-key-budget") || null,
    expires_at: text("new-key-expires") || null,
  };
}

export function wireKeys(run, currentAccount) {
  runAction = run;
  byId("key-cancel").addEventListener("click", stopEditing);
  const form = byId("create-key-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run(async () => {
      const fields = keyFields();
      if (editing) {
        const saved = await adminApi("PATCH", path`keys/${editing.id}`, fields);
        stopEditing();
        return `Saved key ${saved.prefix}…`;
      }
      const { id } = currentAccount();
      const given = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null));
      const created = await adminApi("POST", path`accounts/${id}/keys`, given);
      form.reset();
      justCreated = { accountId: id, key: created.key };
      return `Created key ${created.prefix}…; copy it now.`;
    }, form);
  });
  byId("copy-key").addEventListener("click", copyKey);
  byId("dismiss-key").addEventListener("click", () => showNewKey(null));
}

async function copyKey() {
  const code = byId("new-key");
  const box = byId("new-key-box");
  const note = box.querySelector(".copied") ?? box.appendChild(el("p", { className: "copied", attrs: { role: "status" } }));
  try {
    await navigator.clipboard.writeText(code.textContent);
    note.textContent = "Key copied to the clipboard.";
  } catch {
    // No clipboard API outside secure contexts (plain http on another host): select it instead.
    getSelection().selectAllChildren(code);
    note.textContent = "Key selected: press Ctrl+C (⌘C on a Mac) to copy it.";
  }
}
