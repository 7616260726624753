import { adminApi, path } from "./api.js";
import { byId, el, when } from "./dom.js";

/** An account's API keys: created (the key shown once), listed with their last use, revoked. */

/** A key just created: shown by the next redraw of its account only, then forgotten. */
let justCreated = null;

export function drawKeys(accountId, keys) {
  const rows = keys.map(keyRow);
  if (rows.length === 0) rows.push(el("tr", {}, el("td", { attrs: { colspan: 6 }, className: "empty" }, "No keys yet.")));
  byId("key-rows").replaceChildren(...rows);
  showNewKey(justCreated?.accountId === accountId ? justCreated.key : null);
  justCreated = null;
}

export function hideNewKey() {
  justCreated = null;
  showNewKey(null);
}

function showNewKey(key) {
  byId("new-key-box").querySelector(".copied")?.remove();
  byId("new-key").textContent = key ?? "";
  byId("new-key-box").hidden = key === null;
}

let runAction;

function keyRow(key) {
  const action = key.revoked_at
    ? ""
    : el("button", { attrs: { type: "button", "aria-label": `Revoke key ${key.prefix}` }, on: { click: () => revoke(key) } }, "Revoke");
  return el(
    "tr",
    { className: key.revoked_at ? "revoked" : "" },
    el("td", {}, el("code", {}, `${key.prefix}…`)),
    el("td", { className: "text" }, key.name ?? ""),
    el("td", {}, when(key.created_at)),
    el("td", {}, key.last_used_at ? when(key.last_used_at) : "never"),
    el("td", {}, key.revoked_at ? `revoked ${when(key.revoked_at)}` : "active"),
    el("td", {}, action),
  );
}

function revoke(key) {
  if (!confirm(`Revoke key ${key.prefix}…? Requests with it get 401 from now on.`)) return;
  runAction(async () => {
    await adminApi("POST", path`keys/${key.id}/revoke`);
    return `Revoked key ${key.prefix}…`;
  }, byId("keys"));
}

export function wireKeys(run, currentAccount) {
  runAction = run;
  const form = byId("create-key-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run(async () => {
      const { id } = currentAccount();
      const name = byId("new-key-name").value.trim();
      const created = await adminApi("POST", path`accounts/${id}/keys`, name ? { name } : {});
      byId("new-key-name").value = "";
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
