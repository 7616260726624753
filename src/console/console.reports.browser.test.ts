import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TINY_JUDGMENT } from "../testing/admin-client.js";
import { launchChromium } from "../testing/browser.js";
import { evaluateFailsEngine } from "../testing/fault-engines.js";
import { postJudgment, show } from "../testing/http-client.js";
import { addTestAccount, startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../testing/server.js";
import { actionsOutOfView, expectText, watchedPage, type WatchedPage } from "./browser-test-helpers.js";

/**
 * The console's reports in a real Chromium: the overview's last 30 days, the busiest accounts,
 * the server errors of another instance, the ledger filtered by kind with request ids and keys,
 * and the CSV downloads, each checked against the store.
 */

let server: TestServer;
let failing: TestServer;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let busy: { accountId: string; key: string };
let quiet: { accountId: string; key: string };
let keyPrefix: string;
let failedRequestId: string;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  failing = await startTestServer({ database: server.database, engine: evaluateFailsEngine() });
  const payg = { name: "pay as you go", allowanceQuestions: 0, pricePerMillion: 2_000_000 };
  busy = await addTestAccount(server.services, { plan: payg, balanceMicro: 5_000_000 });
  await server.services.accounts.setPlan(busy.accountId, payg.name);
  quiet = await addTestAccount(server.services, { planId: (await server.store.plans.get(payg.name))!.id, balanceMicro: 5_000_000 });
  keyPrefix = (await server.store.keys.list({ accountId: busy.accountId }))[0].prefix;
  for (let i = 0; i < 3; i++) expect((await postJudgment({ url: server.url, key: busy.key }, TINY_JUDGMENT)).status).toBe(200);
  // Fewer requests, but each charged far more (a longer state): first by euros, second by requests.
  const long = { ...TINY_JUDGMENT, state: "The invoice was paid twice, and again. ".repeat(40) };
  expect((await postJudgment({ url: server.url, key: quiet.key }, long)).status).toBe(200);
  const failed = await postJudgment({ url: failing.url, key: server.key }, TINY_JUDGMENT);
  expect(failed.status, show(failed)).toBe(502);
  failedRequestId = failed.headers.get("x-request-id")!;
  for (let tries = 0; (await server.services.reports.recentServerErrors(1)).length === 0; tries++) {
    if (tries > 100) throw new Error("the 502 was never recorded");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  watched = await watchedPage(browser);
  page = watched.page;
  await page.goto(`${server.url}/console`);
  await page.getByLabel("Admin token", { exact: true }).fill(TEST_ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
});
afterAll(async () => {
  await browser?.close();
  await failing?.close();
  await server?.close();
});

const bars = (testId: string) =>
  page
    .getByTestId(testId)
    .locator("rect.bar")
    .evaluateAll((rects) => rects.map((r) => Number(r.getAttribute("data-value"))));
const rowsOf = (tbody: string) =>
  page.locator(`#${tbody} tr`).evaluateAll((rows) => rows.map((row) => (row as HTMLElement).innerText.replace(/\s+/g, " ").trim()));

describe("the overview's last 30 days", () => {
  it("draws requests, questions, euros and server errors per day: 30 bars each, today's last", async () => {
    await expectText(page.getByTestId("trend-totals"), "4 requests, 4 questions, 1 server error in the last 30 days.");
    const zeros = Array(29).fill(0);
    expect(await bars("trend-requests")).toEqual([...zeros, 4]);
    expect(await bars("trend-questions")).toEqual([...zeros, 4]);
    expect(await bars("trend-errors")).toEqual([...zeros, 1]);
    const charges = (await Promise.all([busy, quiet].map((a) => server.services.accounts.entries(a.accountId, { limit: 50 }))))
      .flat()
      .filter((e) => e.kind === "charge")
      .reduce((sum, e) => sum - e.amountMicro, 0);
    expect(await bars("trend-euros")).toEqual([...zeros, charges]);
  });

  it("ranks the busiest accounts by euros, then by requests when asked", async () => {
    await expectText(page.locator("#busiest-rows tr").first(), new RegExp(quiet.accountId));
    expect((await rowsOf("busiest-rows"))[1]).toContain(busy.accountId);
    await page.getByLabel("Rank by", { exact: true }).selectOption({ label: "requests" });
    await expectText(page.locator("#busiest-rows tr").first(), new RegExp(`${busy.accountId}\\s*3\\s*3`));
  });

  it("lists the other instance's server error with its route, status, code and request id", async () => {
    const [row] = await rowsOf("server-error-rows");
    expect(row).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC POST \/v1\/systemone 502 model_failed/);
    expect(row).toContain(failedRequestId);
  });

  it("downloads usage per account and day as CSV", async () => {
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download usage per account and day (CSV)" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^usage-all-accounts-\d{4}-\d\d-\d\d-to-\d{4}-\d\d-\d\d\.csv$/);
    const text = readFileSync((await download.path())!, "utf8");
    expect(text.split("\r\n")[0]).toBe("date,account_id,account_name,requests,questions,input_tokens,charged_micro,charged_eur");
    expect(text).toMatch(new RegExp(`,${busy.accountId},[^,]*,3,3,`));
    await expectText(page.locator("#trend-downloads").getByRole("status"), /^Downloaded usage-all-accounts-/);
  });
});

describe("the ledger", () => {
  it("shows each judgment's request id and key, and filters by kind", async () => {
    await page.evaluate((hash) => (location.hash = hash), `#/accounts/${busy.accountId}`);
    await expectText(page.getByTestId("ledger-range"), "Entries 1–4, newest first");
    const requestIds = (await server.services.accounts.entries(busy.accountId, { limit: 10 })).filter((e) => e.kind === "charge").map((e) => e.requestId!);
    const rows = await rowsOf("ledger-rows");
    expect(rows.filter((row) => row.includes(`${keyPrefix}…`))).toHaveLength(3);
    for (const id of requestIds)
      expect(
        rows.some((row) => row.includes(id)),
        rows.join("\n"),
      ).toBe(true);
    await page.getByLabel("Show", { exact: true }).selectOption({ label: "top-ups" });
    await expectText(page.getByTestId("ledger-range"), "Entries 1–1, newest first");
    expect(await rowsOf("ledger-rows")).toEqual([expect.stringMatching(/top-up 5\.00 0 0 — —/)]);
    await page.getByLabel("Show", { exact: true }).selectOption({ label: "adjustments" });
    await expectText(page.locator("#ledger-rows tr"), "No ledger entries of this kind.");
  });

  it("downloads the ledger as CSV with the filter shown, and the account's usage by day", async () => {
    await page.getByLabel("Show", { exact: true }).selectOption({ label: "charges" });
    await expectText(page.getByTestId("ledger-range"), "Entries 1–3, newest first");
    const [ledger] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download ledger (CSV)" }).click()]);
    expect(ledger.suggestedFilename()).toMatch(new RegExp(`^ledger-${busy.accountId}-charge-\\d{4}-\\d\\d-\\d\\d\\.csv$`));
    const lines = readFileSync((await ledger.path())!, "utf8")
      .trimEnd()
      .split("\r\n");
    expect(lines.slice(1).map((line) => line.split(",")[2])).toEqual(["charge", "charge", "charge"]);
    for (const line of lines.slice(1)) expect(line).toContain(`,${keyPrefix},`);
    const [usage] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download usage by day, 30 days (CSV)" }).click()]);
    const usageLines = readFileSync((await usage.path())!, "utf8")
      .trimEnd()
      .split("\r\n");
    expect(usageLines.slice(1)).toEqual([expect.stringMatching(new RegExp(`^\\d{4}-\\d\\d-\\d\\d,${busy.accountId},[^,]*,3,3,`))]);
  });

  it("at 400 px every button of the account and the overview is in view", async () => {
    await page.setViewportSize({ width: 400, height: 900 });
    expect(await actionsOutOfView(page)).toEqual([]);
    await page.evaluate(() => (location.hash = "#/overview"));
    await expectText(page.getByTestId("trend-totals"), /in the last 30 days/);
    await page.locator("#overview-view").waitFor({ state: "visible" });
    expect(await actionsOutOfView(page)).toEqual([]);
  });

  it("raised no console error, CSP violation, page error or alert", () => {
    expect(watched.problems, watched.problems.join("\n")).toEqual([]);
    expect(watched.alerts, watched.alerts.join("\n")).toEqual([]);
  });
});
