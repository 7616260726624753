import { drawAccount, hideNewKey, wireAccount } from "./account.js";
import { drawAccounts, wireAccounts } from "./accounts.js";
import { drawAudit, wireAudit } from "./audit.js";
import { AdminApiError, adminToken } from "./api.js";
import { byId, clearMessages, showError, showNote } from "./dom.js";
import { drawOverview, wireOverview } from "./overview.js";
import { drawPlans, wirePlans } from "./plans.js";
import { currentRoute } from "./route.js";
import { drawTask, wireTasks } from "./tasks.js";
import { labelTableCells } from "./tables.js";

/** Boots the console: sign-in, then the view the address names, redrawn from the admin API after each action. */

const VIEWS = { overview: drawOverview, accounts: drawAccounts, account: drawAccount, task: drawTask, plans: drawPlans, audit: drawAudit };

/** The address whose view is on the page. */
let drawnFor = null;

/** Draws the current view, then shows it: a view is never shown half-filled. */
async function redraw() {
  const route = currentRoute();
  const address = location.hash;
  try {
    await VIEWS[route.view](route);
  } catch (error) {
    // What is on the page belongs to another address: it must not pass for this one's.
    if (address !== drawnFor) hideViews();
    throw error;
  }
  drawnFor = address;
  for (const name of Object.keys(VIEWS)) byId(`${name}-view`).hidden = name !== route.view;
  if (route.view !== "account") hideNewKey();
  const section = route.view === "account" || route.view === "task" ? "accounts" : route.view;
  for (const link of document.querySelectorAll("#nav a")) {
    if (link.dataset.view === section) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

/**
 * Runs a user action, then redraws. Its outcome or its error is shown beside `place` (the form
 * or section the action belongs to); an action may name another place for its outcome.
 */
async function run(action, place) {
  clearMessages();
  let outcome;
  try {
    outcome = await action();
  } catch (error) {
    report(error, place);
    return;
  }
  try {
    await redraw();
  } catch (error) {
    report(error);
    return;
  }
  const { message, at } = typeof outcome === "string" ? { message: outcome, at: place } : (outcome ?? {});
  if (message && at) showNote(message, at);
}

function report(error, place) {
  // Without a valid token every admin path answers 404 not_found (missing things have their
  // own codes), so not_found means the token is wrong, or the admin API was switched off.
  if (error instanceof AdminApiError && error.code === "not_found") {
    signOut();
    showError("The admin token was not accepted (or the admin API is off on this server).", byId("sign-in-form"));
    return;
  }
  const message = error instanceof AdminApiError ? `${error.message} (${error.code})` : (error.message ?? String(error));
  const visible = place && place.offsetParent !== null;
  showError(message, visible ? place : undefined);
}

function hideViews() {
  for (const name of Object.keys(VIEWS)) byId(`${name}-view`).hidden = true;
  drawnFor = null;
}

function showSignedIn(signedIn) {
  byId("sign-in").hidden = signedIn;
  for (const id of ["nav", "sign-out"]) byId(id).hidden = !signedIn;
  if (!signedIn) hideViews();
}

async function enter() {
  clearMessages();
  try {
    await redraw();
  } catch (error) {
    report(error);
    // A refused token signed out; any other failure (an unknown account in the address, say)
    // leaves the console signed in, with its navigation, beside the error.
    if (!adminToken.get()) return;
  }
  showSignedIn(true);
}

function signOut() {
  adminToken.clear();
  hideNewKey();
  showSignedIn(false);
  byId("admin-token").focus();
}

byId("sign-in-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = byId("admin-token");
  adminToken.set(input.value.trim());
  input.value = "";
  void enter(); // it reports its own errors
});
byId("sign-out").addEventListener("click", () => {
  clearMessages();
  signOut();
});
window.addEventListener("hashchange", () => {
  if (adminToken.get()) void run(async () => "");
});
labelTableCells();
wireOverview(run);
wireAccounts(run);
wireAccount(run);
wirePlans(run);
wireAudit(run);
wireTasks(run);

if (adminToken.get()) void enter();
else showSignedIn(false);
