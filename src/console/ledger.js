import { byId, el, numberCell, when } from "./dom.js";

/** An account's ledger, a page at a time, newest first; "Older" follows the API's next_before. */

export const LEDGER_PAGE = 20;

/** The pages walked back so far: the `before` of each, for "Newer". Forgotten for another account. */
let walk = { accountId: null, befores: [] };

const atPage = (accountId) => (walk.accountId === accountId ? walk : (walk = { accountId, befores: [] }));

/** The query of the account's current ledger page. */
export function ledgerQuery(accountId) {
  const before = atPage(accountId).befores.at(-1);
  return new URLSearchParams({ limit: String(LEDGER_PAGE), ...(before ? { before: String(before) } : {}) });
}

let nextBefore = null;

/** Back to the newest page: after an action that adds an entry, the entry is what to see. */
export function showNewestLedger() {
  walk.befores = [];
}

export function drawLedger(accountId, page) {
  const { befores } = atPage(accountId);
  const rows = page.entries.map(ledgerRow);
  if (rows.length === 0) rows.push(el("tr", {}, el("td", { attrs: { colspan: 6 }, className: "empty" }, "No ledger entries yet.")));
  byId("ledger-rows").replaceChildren(...rows);
  const first = befores.length * LEDGER_PAGE;
  byId("ledger-range").textContent = page.entries.length === 0 ? "" : `Entries ${first + 1}–${first + page.entries.length}, newest first`;
  byId("ledger-newer").disabled = befores.length === 0;
  byId("ledger-older").disabled = page.next_before === null;
  nextBefore = page.next_before;
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
}
