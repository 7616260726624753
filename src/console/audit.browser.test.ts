import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TINY_JUDGMENT } from "../testing/admin-client.js";
import { launchChromium } from "../testing/browser.js";
import { postJudgment, show } from "../testing/http-client.js";
import { startTestServer, type TestServer } from "../testing/server.js";
import { expectText, horizontalOverflow, watchedPage, WIDTHS, type WatchedPage } from "./browser-test-helpers.js";

/**
 * Renaming, disabling and enabling an account, and the audit log, in a real headless Chromium,
 * signed in with a named admin token (not JUDGE_ADMIN_TOKEN), so the log names who did it.
 */

let server: TestServer;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let token: string;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  ({ token } = await server.services.adminTokens.create({ name: "alice" }));
  watched = await watchedPage(browser);
  page = watched.page;
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const label = (text: string) => page.getByLabel(text, { exact: true });
const button = (name: string) => page.getByRole("button", { name, exact: true });
const testId = (id: string) => page.getByTestId(id);
const navTo = (name: string) => page.getByRole("navigation", { name: "Console" }).getByRole("link", { name, exact: true }).click();

describe("accounts and the audit log in a browser", () => {
  it("signs in with a named admin token", async () => {
    await page.goto(`${server.url}/console`);
    await label("Admin token").fill(token);
    await button("Sign in").click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
  });

  it("renames an account, then disables it: its key is refused at once and the list says Disabled", async () => {
    await page.goto(`${server.url}/console#/accounts/${server.accountId}`);
    await expectText(testId("account-status"), "Active");
    await label("New name for the account").fill("Renamed in the browser");
    await button("Rename").click();
    await expectText(page.locator("#rename-form").getByRole("status"), "Renamed to Renamed in the browser.");
    await expectText(page.locator("#account-heading"), "Renamed in the browser");

    await button("Disable account").click();
    await expectText(page.locator("#status-form").getByRole("status"), /is disabled: its keys are refused/);
    await expectText(testId("account-status"), /^Disabled since .*account_disabled/);
    const refused = await postJudgment(server, TINY_JUDGMENT);
    expect(refused.status, show(refused)).toBe(401);
    expect(refused.json.code, show(refused)).toBe("account_disabled");

    await navTo("Accounts");
    const row = page.locator("#account-rows tr", { hasText: "Renamed in the browser" });
    await expectText(row.getByTestId("disabled-badge"), "Disabled");
  });

  it("enables it again: the key answers", async () => {
    await page.goto(`${server.url}/console#/accounts/${server.accountId}`);
    await button("Enable account").click();
    await expectText(page.locator("#status-form").getByRole("status"), /is enabled again/);
    await expectText(testId("account-status"), "Active");
    const answered = await postJudgment(server, TINY_JUDGMENT);
    expect(answered.status, show(answered)).toBe(200);
  });

  it("lists the account's admin actions, newest first, naming the token that did them", async () => {
    await page.getByRole("link", { name: "Audit log of this account" }).click();
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    const rows = page.locator("#audit-rows tr");
    await expect.poll(() => rows.count()).toBe(3);
    const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(1, 3).map((td) => td.textContent)));
    expect(cells).toEqual([
      ["token:alice", "account.enable"],
      ["token:alice", "account.disable"],
      ["token:alice", "account.rename"],
    ]);
    await expectText(rows.nth(2).locator("td").nth(4), `from: "test account", to: "Renamed in the browser"`);

    await navTo("Audit log");
    await expectText(page.locator("#audit-scope"), /Every admin change/);
    expect(await page.locator("#audit-rows tr").count()).toBeGreaterThanOrEqual(3);
    expect(watched.problems, watched.problems.join("\n")).toEqual([]);
  });

  it("shows amounts as money and instants as times, not micro-euros and epoch milliseconds; counts in the singular when one", async () => {
    await page.goto(`${server.url}/console#/accounts/${server.accountId}`);
    await expectText(testId("usage-totals"), /^So far this period: 1 question in 1 request, €[\d.]+ charged to the balance\.$/);
    await label("Top-up amount (€)").fill("12.345678");
    await label("Top-up note").fill("paid by card");
    await button("Top up").click();
    await expectText(page.locator("#top-up-form").getByRole("status"), /^Added €12\.345678/);
    await label("Key name").fill("audited key");
    await label("Key requests per minute").fill("1200");
    await label("Key budget (€)").fill("5");
    await label("Key expires").fill("2099-12-31");
    await button("Create key").click();
    await expectText(page.locator("#create-key-form").getByRole("status"), /^Created key /);
    await server.services.plans.update("test unlimited", { pricePerMillion: 2_500_000 }, { kind: "env-token" });

    await page.goto(`${server.url}/console#/audit`);
    const row = (action: string) => page.locator("#audit-rows tr", { hasText: action }).first().locator("td").nth(4);
    await expectText(row("balance.top_up"), /amount: €12\.345678, balance: €\d+\.\d{2,6}, note: "paid by card"/);
    await expectText(row("key.create"), /requests per minute: 1,200, budget: €5\.00, expires: 2099-12-31 00:00 UTC/);
    await expectText(row("plan.update"), /price per million tokens: €[\d.]+ → €2\.50/);
    const details = await page.locator("#audit-rows td:nth-child(5)").allInnerTexts();
    // No figure of seven digits or more is left raw: µ€ and epoch milliseconds are all of that size here.
    expect(
      details.filter((text) => /\d{7,}/.test(text)),
      details.join("\n"),
    ).toEqual([]);
    await expectText(page.locator("#audit-rows tr").first().locator("td").first(), /^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(watched.problems, watched.problems.join("\n")).toEqual([]);
  });

  it("keeps the account's new forms and the audit log inside a phone's width (400 px)", async () => {
    await page.setViewportSize({ width: WIDTHS.phone, height: 800 });
    for (const address of [`#/accounts/${server.accountId}`, `#/audit?account=${server.accountId}`, "#/audit", "#/accounts"]) {
      await page.goto(`${server.url}/console${address}`);
      await page.locator(".view:not([hidden]) h1").first().waitFor();
      await expect.poll(() => horizontalOverflow(page), { timeout: 5_000 }).toEqual([]);
      if (address.startsWith("#/accounts/")) {
        // The account's details arrive after its heading, so wait for them rather than sample once.
        for (const name of ["Rename", "Disable account"]) await expect.poll(() => button(name).isVisible(), { message: name, timeout: 5_000 }).toBe(true);
      }
    }
    expect(watched.problems, watched.problems.join("\n")).toEqual([]);
  });
});
