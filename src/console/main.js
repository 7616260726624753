import { renderAccount, hideAccount, wireAccount } from "./account.js";
import { renderAccounts, selectedAccountId, wireAccounts } from "./accounts.js";
import { AdminApiError, adminApi, adminToken, path } from "./api.js";
import { byId, clearMessages, fillPlanSelects, showError, showStatus } from "./dom.js";
import { renderPlans, wirePlans } from "./plans.js";

/** Boots the console: sign-in, then every section redrawn from the admin API after each action. */

async function redraw() {
  const [{ plans }, { accounts }] = await Promise.all([adminApi("GET", "plans"), adminApi("GET", "accounts")]);
  fillPlanSelects(plans);
  renderPlans(plans);
  renderAccounts(accounts);
  const id = selectedAccountId();
  if (id) renderAccount(await adminApi("GET", path`accounts/${id}`));
  else hideAccount();
}

/** Runs a user action, redraws, then reports the action's outcome or its error. */
async function run(action) {
  clearMessages();
  try {
    const message = await action();
    await redraw();
    if (message) showStatus(message);
  } catch (error) {
    report(error);
  }
}

function report(error) {
  // Without a valid token every admin path answers 404 not_found (missing things have their
  // own codes), so not_found means the token is wrong, or the admin API was switched off.
  if (error instanceof AdminApiError && error.code === "not_found") {
    signOut();
    showError("The admin token was not accepted (or the admin API is off on this server).");
    return;
  }
  if (error instanceof AdminApiError && error.code === "account_not_found") hideAccount();
  showError(error instanceof AdminApiError ? `${error.message} (${error.code})` : error.message ?? String(error));
}

function showSignedIn(signedIn) {
  byId("sign-in").hidden = signedIn;
  byId("signed-in").hidden = !signedIn;
  byId("sign-out").hidden = !signedIn;
}

async function enter() {
  clearMessages();
  try {
    await redraw();
    showSignedIn(true);
  } catch (error) {
    report(error);
  }
}

function signOut() {
  adminToken.clear();
  showSignedIn(false);
  byId("admin-token").focus();
}

byId("sign-in-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = byId("admin-token");
  adminToken.set(input.value.trim());
  input.value = "";
  enter();
});
byId("sign-out").addEventListener("click", () => {
  clearMessages();
  signOut();
});
window.addEventListener("hashchange", () => run(async () => ""));
wireAccounts(run);
wireAccount(run);
wirePlans(run);

if (adminToken.get()) enter();
else showSignedIn(false);
