import { adminDownload, path } from "./api.js";
import { byId, el, numberCell, whenParts } from "./dom.js";

/**
 * An account's ledger, a page at a time, newest first, of one kind or every kind; "Older"
 * follows the API's next_before. Each judgment shows its request id and the key it came with.
 * The CSV downloads take the same filter.
 */

export const LEDGER_PAGE = 20;

/** The pages walked back so far (the `before` of each, for "Newer") and the kind shown. Forgotten for another account. */
let walk = { accountId: null, befores: [], kind: "" };

const atPage = (accountId) => (walk.accountId === accountId ? walk : (walk = { accountId, befores: [], kind: "" }));

/** The query of the account's current ledger page. */
export function ledgerQuery(accountId) {
  const { befores, kind } = atPage(accountId);
  const before = befores.at(-1);
  return new URLSearchParams({ limit: String(LEDGER_PAGE), ...(before ? { before: String(before) } : {}), ...(kind ? { kind } : {}) });
}

let nextBefore = null;

/** Back to the newest page: after an action that adds an entry, the entry is what to see. */
export function showNewestLedger() {
  walk.befores = [];
}

const COLUMNS = 8;

export function drawLedger(accountId, page) {
  const { befores, kind } = atPage(accountId);
  byId("ledger-kind").value = kind;
  const rows = page.entries.map(ledgerRow);
  if (rows.length === 0)
    rows.push(el("tr", {}, el("td", { attrs: { colspan: COLUMNS }, className: "empty" }, kind ? "No ledger entries of this kind." : "No ledger entries yet.")));
  byId("ledger-rows").replaceChildren(...rows);
  const first = befores.length * LEDGER_PAGE;
  byId("ledger-range").textContent = page.entries.length === 0 ? "" : `Entries ${first + 1}–${first + page.entries.length}, newest first`;
  byId("ledger-newer").disabled = befores.length === 0;
  byId("ledger-older").disabled = page.next_before === null;
  nextBefore = page.next_before;
}

const KIND_LABELS = { top_up: "top-up", charge: "charge", plan: "plan allowance", adjustment: "adjustment" };

function keyCell(key) {
  if (!key) return el("td", {}, "—");
  return el("td", { className: "text" }, el("code", {}, `${key.prefix}…`), key.name ? el("span", { className: "sub" }, key.name) : null);
}

/** Cut to the column with an ellipsis; the whole id is the title, and copying the cell copies all of it. */
const requestId = (id) => el("code", { className: "request-id", attrs: { title: id } }, id);

function ledgerRow(entry) {
  return el(
    "tr",
    {},
    el("td", { className: "when" }, whenParts(entry.at)),
    el("td", {}, KIND_LABELS[entry.kind] ?? entry.kind),
    numberCell(entry.amount),
    numberCell(entry.questions),
    numberCell(entry.input_tokens),
    el("td", {}, entry.request_id ? requestId(entry.request_id) : "—"),
    keyCell(entry.key),
    el("td", { className: "text" }, entry.note ?? ""),
  );
}

export function wireLedger(run) {
  const place = byId("ledger");
  byId("ledger-older").addEventListener("click", () =>
    run(async () => {
      if (nextBefore !== null) walk.befores.push(nextBefore);
    }, place),
  );
  byId("ledger-newer").addEventListener("click", () =>
    run(async () => {
      walk.befores.pop();
    }, place),
  );
  const filter = byId("ledger-filter");
  filter.addEventListener("submit", (event) => event.preventDefault());
  byId("ledger-kind").addEventListener("change", () =>
    run(async () => {
      walk.kind = byId("ledger-kind").value;
      walk.befores = [];
    }, filter),
  );
  byId("download-ledger").addEventListener("click", () =>
    run(async () => {
      const query = walk.kind ? `?kind=${walk.kind}` : "";
      return `Downloaded ${await adminDownload(`${path`accounts/${walk.accountId}/ledger.csv`}${query}`)}.`;
    }, filter),
  );
  byId("download-account-usage").addEventListener("click", () =>
    run(async () => `Downloaded ${await adminDownload(`usage.csv?days=30&account=${encodeURIComponent(walk.accountId)}`)}.`, filter),
  );
}
