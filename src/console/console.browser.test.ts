import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TINY_JUDGMENT } from "../testing/admin-client.js";
import { launchChromium } from "../testing/browser.js";
import { postJudgment, show } from "../testing/http-client.js";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../testing/server.js";
import { expectText, watchedPage, type WatchedPage } from "./browser-test-helpers.js";

/**
 * The console end to end, in a real headless Chromium against the real server: each step is
 * done the way a person would (labels, buttons, links), and checked in the page and in the store.
 */

let server: TestServer;
let browser: Browser;
let watched: WatchedPage;
let page: Page;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  watched = await watchedPage(browser);
  page = watched.page;
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const EVIL_NAME = `Evil <script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> & Co`;
let accountId: string;
let key: string;

const label = (text: string) => page.getByLabel(text, { exact: true });
const button = (name: string) => page.getByRole("button", { name, exact: true });
const testId = (id: string) => page.getByTestId(id);
const navTo = (name: string) => page.getByRole("navigation", { name: "Console" }).getByRole("link", { name, exact: true }).click();

/** Chromium logs every failed fetch as a console error; this takes out those a step caused on purpose. */
async function expectFailedRequests(status: number, count: number): Promise<void> {
  const logged = (problem: string) => problem.includes(`status of ${status}`);
  await expect.poll(() => watched.problems.filter(logged).length, { timeout: 10_000 }).toBe(count);
  for (let i = 0; i < count; i++) watched.problems.splice(watched.problems.findIndex(logged), 1);
}

describe("the console in a browser", () => {
  it("refuses a wrong token beside the sign-in form, and forgets it", async () => {
    await page.goto(`${server.url}/console`);
    await label("Admin token").fill(server.key);
    await button("Sign in").click();
    await expectText(page.locator("#sign-in-form").getByRole("alert"), /admin token was not accepted/);
    await expectFailedRequests(404, 1); // the overview (GET /health, asked with it, has no token to refuse)
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.getByRole("heading", { name: "Overview" }).isHidden()).toBe(true);
  });

  it("signs in with the admin token, kept in sessionStorage only, never in the URL, onto the overview", async () => {
    await label("Admin token").fill(TEST_ADMIN_TOKEN);
    await button("Sign in").click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const storage = await page.evaluate(() => ({ session: { ...sessionStorage }, local: { ...localStorage } }));
    expect(Object.values(storage.session), JSON.stringify(storage)).toEqual([TEST_ADMIN_TOKEN]);
    expect(storage.local, JSON.stringify(storage)).toEqual({});
    expect(page.url()).not.toContain(TEST_ADMIN_TOKEN);
    await expectText(testId("health-status"), "Ready");
    await expectText(testId("health-model"), server.engine.modelId);
    await expectText(testId("today-questions"), "0");
    await expectText(testId("ledger-check-status"), "Not run on this instance since it started");
  });

  it("creates a plan, then edits it; a plan without allowance says so", async () => {
    await navTo("Plans");
    for (const [name, allowance] of [
      ["Browser plan", "100"],
      ["Pay as you go", "0"],
    ]) {
      await label("Plan name").fill(name);
      await label("Requests per minute").fill("30");
      await label("Questions per period").fill(allowance);
      await label("Price per million tokens (€)").fill("0.10");
      await button("Create plan").click();
      await expectText(page.locator("#plan-form").getByRole("status"), `Created plan ${name}.`);
    }
    await button("Edit plan Browser plan").click();
    await label("Questions per period").fill("200");
    await button("Save plan").click();
    await expectText(page.locator("#plan-form").getByRole("status"), "Saved plan Browser plan.");
    await expectText(page.getByRole("row").filter({ hasText: "Browser plan" }), /Browser plan\s*30\s*200\s*€0\.10/);
    await expectText(page.getByRole("row").filter({ hasText: "Pay as you go" }), /none \(pay per token\)/);
    expect(await server.store.plans.get("Browser plan")).toMatchObject({ requestsPerMinute: 30, allowanceQuestions: 200, pricePerMillion: 100_000 });
  });

  it("shows a refused plan beside its form, not at the top of the page", async () => {
    await label("Plan name").fill("Browser plan");
    await label("Requests per minute").fill("1");
    await label("Questions per period").fill("1");
    await label("Price per million tokens (€)").fill("1");
    await button("Create plan").click();
    await expectText(page.locator("#plan-form").getByRole("alert"), /plan_exists/);
    await expectFailedRequests(409, 1);
    expect(await page.locator("#error").isHidden()).toBe(true);
  });

  it("creates an account whose name holds markup, and shows the name as text", async () => {
    await navTo("Accounts");
    await label("Account name").fill(EVIL_NAME);
    await label("Plan for the new account").selectOption({ label: "Browser plan" });
    await button("Create account").click();
    await expectText(page.getByRole("heading", { level: 1, name: EVIL_NAME }), EVIL_NAME);
    await expectText(page.locator("#account-notes").getByRole("status"), `Created account ${EVIL_NAME}.`);
    accountId = (await testId("account-id").textContent())!;
    expect((await server.store.accounts.get(accountId))?.name).toBe(EVIL_NAME);
    expect(page.url()).toContain(`#/accounts/${accountId}`);
    const injected = await page.evaluate(() => ({
      pwned: (window as unknown as { pwned?: number }).pwned,
      scripts: document.querySelectorAll("script").length,
      images: document.querySelectorAll("img").length,
    }));
    expect(injected, "the account name ran or became markup").toEqual({ pwned: undefined, scripts: 1, images: 0 });
    await expectText(testId("usage"), "0 of 200 questions (0%)");
    await expectText(testId("usage-totals"), "So far this period: 0 questions in 0 requests, €0.00 charged to the balance.");
  });

  it("tops up 12.50 and shows the balance €12.50, exactly", async () => {
    await label("Top-up amount (€)").fill("12.50");
    await label("Top-up note").fill("invoice <b>42</b>");
    await button("Top up").click();
    await expectText(testId("balance"), "€12.50");
    await expectText(page.locator("#top-up-form").getByRole("status"), "Added €12.50; the balance is €12.50.");
    await expectText(page.locator("#ledger-rows tr").first(), /top-up\s*12\.50.*invoice <b>42<\/b>/);
    expect((await server.store.accounts.get(accountId))?.balanceMicro).toBe(12_500_000);
  });

  it("shows the API's refusal of a bad amount inside the top-up form, and changes nothing", async () => {
    await label("Top-up amount (€)").fill("1e3");
    await button("Top up").click();
    const error = page.locator("#top-up-form").getByRole("alert");
    await expectText(error, /decimal euro amount/);
    await expectFailedRequests(400, 1);
    expect(await page.locator("#error").isHidden()).toBe(true);
    expect(await label("Top-up amount (€)").getAttribute("aria-describedby")).toBe(await error.getAttribute("id"));
    expect((await server.store.accounts.get(accountId))?.balanceMicro).toBe(12_500_000);
  });

  it("creates a key and shows it once, with a copy button and a warning", async () => {
    await label("Key name").fill("browser key");
    await button("Create key").click();
    await expectText(testId("new-key"), /^tjs_\S+$/);
    key = (await testId("new-key").textContent())!;
    await button("Copy key").waitFor();
    await page.getByText("it will not be shown again", { exact: false }).waitFor();
    expect((await server.store.keys.authenticate(key))?.accountId).toBe(accountId);
    await expectText(page.locator("#key-rows tr").filter({ hasText: "browser key" }), /never\s*active/);
  });

  it("after the key is used: usage, the chart of the day, the ledger, the key's last use; the key itself is gone", async () => {
    for (let i = 0; i < 2; i++) {
      const judged = await postJudgment({ url: server.url, key }, TINY_JUDGMENT);
      expect(judged.status, show(judged)).toBe(200);
    }
    await page.reload();
    await expectText(testId("usage"), "2 of 200 questions (1%)");
    await expectText(testId("usage-totals"), "So far this period: 2 questions in 2 requests, €0.00 charged to the balance.");
    const bars = await page.locator('[data-testid="chart-questions"] rect.bar').evaluateAll((rects) => rects.map((r) => Number(r.getAttribute("data-value"))));
    expect(bars, "one bar a day so far: today's").toEqual([2]);
    // Each judgment's entry names its request and the key it came with.
    await expectText(page.locator("#ledger-rows tr").first(), /plan allowance\s*0\.00\s*1\s*\d+\s*req_\w+\s*tjs_\w+…\s*browser key/);
    await expectText(page.locator("#key-rows tr").filter({ hasText: "browser key" }), /\d{4}-\d\d-\d\d \d\d:\d\d UTC\s*active/);
    expect(await page.locator("#new-key-box").isHidden()).toBe(true);
    expect(await page.content()).not.toContain(key);
  });

  it("pages the ledger: Older, then Newer", async () => {
    for (let i = 1; i <= 20; i++) await server.services.accounts.topUp(accountId, 1, `bulk ${i}`);
    await button("Refresh").click();
    await expectText(testId("ledger-range"), "Entries 1–20, newest first");
    await expectText(page.locator("#ledger-rows tr").first(), /bulk 20/);
    await button("Older").click();
    await expectText(testId("ledger-range"), "Entries 21–23, newest first"); // the top-up and the 2 judgments
    await expectText(page.locator("#ledger-rows tr").last(), /invoice/);
    expect(await button("Older").isDisabled()).toBe(true);
    await button("Newer").click();
    await expectText(testId("ledger-range"), "Entries 1–20, newest first");
  });

  it("moves the account to a plan without allowance: no '0 of 0 (100%)' anywhere", async () => {
    await label("Account plan").selectOption({ label: "Pay as you go" });
    await button("Set plan").click();
    await expectText(testId("account-plan"), "Pay as you go");
    await expectText(testId("usage"), "No allowance: every question is paid from the balance");
    await page.getByRole("link", { name: "← All accounts" }).click();
    const row = page.getByRole("row").filter({ hasText: EVIL_NAME });
    await expectText(row, /Pay as you go\s*€12\.50002\d*\s*No allowance/);
    expect(await page.locator("main").innerText()).not.toMatch(/0 of 0|100%/);
  });

  it("revokes the key; the key then gets 401", async () => {
    await page.getByRole("link", { name: EVIL_NAME }).click();
    const prefix = (await server.store.keys.list({ accountId }))[0].prefix;
    await button(`Revoke key ${prefix}`).click();
    await expectText(page.locator("#key-rows tr").filter({ hasText: "browser key" }), /revoked/);
    const refused = await postJudgment({ url: server.url, key }, TINY_JUDGMENT);
    expect(refused.status, show(refused)).toBe(401);
  });

  it("an unknown account in the address: the error at the top, even after a reload, and the console still usable", async () => {
    for (const step of [() => page.evaluate(() => (location.hash = "#/accounts/acct_nope")), () => page.reload()]) {
      await step();
      await expectText(page.locator("#error"), "No account with id acct_nope (account_not_found)");
      await expectFailedRequests(404, 4); // the account, its usage, its ledger and its tasks, asked for together
      expect(await page.getByRole("navigation", { name: "Console" }).isVisible()).toBe(true);
      expect(await page.locator("#account-view").isHidden(), "the last account shown must not pass for acct_nope").toBe(true);
    }
    await navTo("Accounts");
    await expectText(page.getByRole("link", { name: EVIL_NAME }), EVIL_NAME);
    expect(await page.locator("#error").isHidden()).toBe(true);
  });

  it("the overview counts today's judgments and the 401, and runs the ledger check on request", async () => {
    await navTo("Overview");
    await expectText(testId("today-requests"), "2");
    await expectText(testId("today-questions"), "2");
    await expectText(testId("http-4xx"), "1");
    await expectText(testId("today-topped-up"), "€12.50002");
    await button("Run ledger check").click();
    await expectText(testId("ledger-check-status"), /^Consistent: 2 accounts, checked \d{4}-/);
    await expectText(page.locator("#ledger-check").getByRole("status"), "Every balance and usage agrees with the ledger (2 accounts).");
  });

  it("signs out, forgetting the token", async () => {
    await button("Sign out").click();
    await label("Admin token").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.getByRole("heading", { name: "Overview" }).isHidden()).toBe(true);
  });

  it("raised no console error, CSP violation, page error or alert along the way", () => {
    expect(watched.problems, watched.problems.join("\n")).toEqual([]);
    expect(watched.alerts, watched.alerts.join("\n")).toEqual([]);
  });
});
