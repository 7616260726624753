import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TINY_JUDGMENT } from "../testing/admin-client.js";
import { launchChromium } from "../testing/browser.js";
import { postJudgment, show } from "../testing/http-client.js";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../testing/server.js";

/**
 * The console end to end, in a real headless Chromium against the real server: each step is
 * done the way a person would (labels, buttons), and checked in the page and in the store.
 */

let server: TestServer;
let browser: Browser;
let page: Page;
/** Console errors, uncaught exceptions and CSP violations: each one fails the last test. */
const problems: string[] = [];
/** Any alert() would mean an account name ran as script. */
const alerts: string[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  page = await browser.newPage();
  page.setDefaultTimeout(10_000);
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("dialog", async (dialog) => {
    if (dialog.type() === "confirm") return dialog.accept();
    alerts.push(`${dialog.type()}: ${dialog.message()}`);
    return dialog.dismiss();
  });
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

/** Chromium logs every failed fetch as a console error; this takes out those a step caused on purpose. */
async function expectFailedRequests(status: number, count: number): Promise<void> {
  const logged = (problem: string) => problem.includes(`status of ${status}`);
  await expect.poll(() => problems.filter(logged).length, { timeout: 10_000 }).toBe(count);
  for (let i = 0; i < count; i++) problems.splice(problems.findIndex(logged), 1);
}

async function expectText(locator: Locator, expected: string | RegExp): Promise<void> {
  await expect.poll(async () => (await locator.textContent())?.trim(), { timeout: 10_000 }).toMatch(expected);
}

describe("the console in a browser", () => {
  it("refuses a wrong token and forgets it", async () => {
    await page.goto(`${server.url}/console`);
    await label("Admin token").fill(server.key);
    await button("Sign in").click();
    await expectText(page.getByRole("alert"), /admin token was not accepted/);
    await expectFailedRequests(404, 2); // the plans and the accounts, asked for together
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.getByRole("heading", { name: "Accounts" }).isHidden()).toBe(true);
  });

  it("signs in with the admin token, kept in sessionStorage only, never in the URL", async () => {
    await label("Admin token").fill(TEST_ADMIN_TOKEN);
    await button("Sign in").click();
    await page.getByRole("heading", { name: "Accounts" }).waitFor();
    const storage = await page.evaluate(() => ({ session: { ...sessionStorage }, local: { ...localStorage } }));
    expect(Object.values(storage.session), JSON.stringify(storage)).toEqual([TEST_ADMIN_TOKEN]);
    expect(storage.local, JSON.stringify(storage)).toEqual({});
    expect(page.url()).not.toContain(TEST_ADMIN_TOKEN);
    await expectText(page.getByRole("cell", { name: "test account", exact: true }), "test account");
  });

  it("creates a plan, then edits it", async () => {
    await label("Plan name").fill("Browser plan");
    await label("Requests per minute").fill("30");
    await label("Questions per period").fill("100");
    await label("Price per million tokens (€)").fill("0.10");
    await button("Create plan").click();
    await button("Edit plan Browser plan").click();
    await label("Questions per period").fill("200");
    await button("Save plan").click();
    await expectText(page.getByRole("status"), "Saved plan Browser plan.");
    const row = page.getByRole("row").filter({ hasText: "Browser plan" });
    await expectText(row, /Browser plan\s*30\s*200\s*€0\.10/);
    expect(await server.store.plans.get("Browser plan")).toMatchObject({ requestsPerMinute: 30, allowanceQuestions: 200, pricePerMillion: 100_000 });
  });

  it("creates an account whose name holds markup, and shows the name as text", async () => {
    await label("Account name").fill(EVIL_NAME);
    await button("Create account").click();
    await expectText(page.getByRole("heading", { level: 2, name: EVIL_NAME }), EVIL_NAME);
    await expectText(page.getByRole("link", { name: EVIL_NAME }), EVIL_NAME);
    accountId = (await testId("account-id").textContent())!;
    expect((await server.store.accounts.get(accountId))?.name).toBe(EVIL_NAME);
    const injected = await page.evaluate(() => ({
      pwned: (window as unknown as { pwned?: number }).pwned,
      scripts: document.querySelectorAll("script").length,
      images: document.querySelectorAll("img").length,
    }));
    expect(injected, "the account name ran or became markup").toEqual({ pwned: undefined, scripts: 1, images: 0 });
  });

  it("sets the account's plan", async () => {
    await label("Account plan").selectOption({ label: "Browser plan" });
    await button("Set plan").click();
    await expectText(testId("account-plan"), "Browser plan");
    expect((await server.store.accounts.get(accountId))?.planId).toBe((await server.store.plans.get("Browser plan"))?.id);
    await expectText(testId("usage"), "0 of 200 questions (0%)");
  });

  it("tops up 12.50 and shows the balance €12.50, exactly", async () => {
    await label("Top-up amount (€)").fill("12.50");
    await label("Top-up note").fill("invoice <b>42</b>");
    await button("Top up").click();
    await expectText(testId("balance"), "€12.50");
    await expectText(page.locator("#ledger-rows tr").first(), /top-up\s*12\.50.*invoice <b>42<\/b>/);
    expect((await server.store.accounts.get(accountId))?.balanceMicro).toBe(12_500_000);
  });

  it("shows the API's refusal of a bad amount, and changes nothing", async () => {
    await label("Top-up amount (€)").fill("1e3");
    await button("Top up").click();
    await expectText(page.getByRole("alert"), /decimal euro amount/);
    await expectFailedRequests(400, 1);
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
  });

  it("shows usage and ledger after the key is used; after a reload the key is gone from the page", async () => {
    const judged = await postJudgment({ url: server.url, key }, TINY_JUDGMENT);
    expect(judged.status, show(judged)).toBe(200);
    await page.reload();
    await expectText(testId("usage"), "1 of 200 questions (0%)");
    await expectText(page.locator("#ledger-rows tr").first(), /plan allowance\s*0\.00\s*1\s*\d+/);
    expect(await page.locator("#new-key-box").isHidden()).toBe(true);
    expect(await page.content()).not.toContain(key);
    await expectText(page.getByRole("row").filter({ hasText: EVIL_NAME }), /Browser plan\s*€12\.50\s*0% \(1 of 200\)/);
  });

  it("revokes the key; the key then gets 401", async () => {
    const prefix = (await server.store.keys.list({ accountId }))[0].prefix;
    await button(`Revoke key ${prefix}`).click();
    await expectText(page.getByRole("row").filter({ hasText: "browser key" }), /revoked/);
    const refused = await postJudgment({ url: server.url, key }, TINY_JUDGMENT);
    expect(refused.status, show(refused)).toBe(401);
  });

  it("signs out, forgetting the token", async () => {
    await button("Sign out").click();
    await label("Admin token").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  it("raised no console error, CSP violation, page error or alert along the way", () => {
    expect(problems, problems.join("\n")).toEqual([]);
    expect(alerts, alerts.join("\n")).toEqual([]);
  });
});
