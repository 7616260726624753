import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall, TINY_JUDGMENT } from "../testing/admin-client.js";
import { launchChromium } from "../testing/browser.js";
import { postJudgment, show } from "../testing/http-client.js";
import { addTestAccount, startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../testing/server.js";
import { tamper } from "../store/test-helpers.js";
import {
  actionsOutOfView,
  cutCells,
  expectText,
  horizontalOverflow,
  tablesWiderThanTheirBox,
  watchedPage,
  WIDTHS,
  type WatchedPage,
} from "./browser-test-helpers.js";

/**
 * Every view of the console at desktop and phone width, on a store with enough in it to fill
 * each table: nothing may stick out sideways (tables scroll in their own box), and each view is
 * saved as a screenshot in a temporary directory for people to look at.
 */

let server: TestServer;
let browser: Browser;
let watched: WatchedPage;
const shots = mkdtempSync(join(tmpdir(), "console-screenshots-"));
/** The busiest account: a long name, a key in use, charges, a ledger longer than a page. */
let busy: string;

const LONG_NAME = "Globex Corporation — European research and development division (Cypress Creek campus)";
const BUSY_NAME = "Initech Payments & Risk Analytics — Nordic enterprise integration team (Oslo, Stockholm, Helsinki)";
/** Notes of 32 characters as people write them: words, and one reference with no space to break at. */
const NOTES = ["Invoice 2026-0117, paid by card.", "PO-4711-2026/GLOBEX-EU-SEPA-0042"];
const DAY = 86_400_000;
/** Who did what the audit log shows. */
const ADMIN = { kind: "env-token" } as const;

/**
 * The keys an account has after a while: one of each status and one with every limit, most with
 * names as long as people give them. The expiry is set in the database, in the past, as time would.
 */
async function addKeys(accountId: string) {
  const { keys } = server.services;
  const limits = { requestsPerMinute: 1200, budgetMicro: 1_234_560_000, expiresAt: Date.now() + 400 * DAY };
  const limited = await keys.create({ accountId, name: "nightly batch importer (eu-west-1, production)", ...limits }, ADMIN);
  expect((await postJudgment({ url: server.url, key: limited.key }, TINY_JUDGMENT)).status).toBe(200);
  const expired = await keys.create({ accountId, name: "trial key for the onboarding workshop in March", requestsPerMinute: 60, expiresAt: Date.now() + DAY });
  await tamper(server.database, `UPDATE api_keys SET expires_at = ${Date.now() - 3 * DAY} WHERE id = '${expired.record.id}'`);
  const revoked = await keys.create({ accountId, name: "a key with a rather long name for the nightly batch importer" });
  await keys.revoke(revoked.record.id, ADMIN);
  await keys.create({ accountId });
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  const payg = { name: "pay as you go", allowanceQuestions: 0, pricePerMillion: 2_000_000 };
  const account = await addTestAccount(server.services, { plan: payg, balanceMicro: 25_000_000 });
  busy = account.accountId;
  await server.store.accounts.setPlan(busy, "pay as you go");
  for (let i = 0; i < 3; i++) expect((await postJudgment({ url: server.url, key: account.key }, TINY_JUDGMENT)).status).toBe(200);
  expect((await postJudgment({ url: server.url, key: "tjs_wrong" }, TINY_JUDGMENT)).status).toBe(401);
  for (let i = 1; i <= 22; i++) await server.services.accounts.topUp(busy, 1_000_000, `invoice 2026-${String(i).padStart(3, "0")} paid by bank transfer`);
  for (let i = 1; i <= 30; i++) await server.services.accounts.create({ name: i === 7 ? LONG_NAME : `Customer ${String(i).padStart(2, "0")} Ltd` });
  await server.services.accounts.rename(busy, BUSY_NAME);
  await addKeys(busy);
  for (const note of NOTES) await server.services.accounts.topUp(busy, 500_000, note, ADMIN);
  await server.services.ledger.check();
  watched = await watchedPage(browser);
  const { page } = watched;
  await page.goto(`${server.url}/console`);
  await page.getByLabel("Admin token", { exact: true }).fill(TEST_ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  console.info(`console screenshots: ${shots}`);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const VIEWS: [name: string, hash: () => string, ready: string][] = [
  ["overview", () => "#/overview", "Ready"],
  ["accounts", () => "#/accounts", "1–25 of 32"],
  ["accounts-page-2", () => "#/accounts?offset=25", "26–32 of 32"],
  ["account", () => `#/accounts/${busy}`, "Entries 1–20, newest first"],
  ["plans", () => "#/plans", "Plans"],
  ["audit", () => "#/audit", "Every admin change, from the CLI, the admin API and this console, newest first."],
];

/** Opens view `name` and waits until it is shown, drawn with the text `ready`. */
async function open(name: string, hash: string, ready: string) {
  const { page } = watched;
  await page.evaluate((target) => (location.hash = target), hash);
  const marker = {
    overview: page.getByTestId("health-status"),
    accounts: page.getByTestId("accounts-range"),
    "accounts-page-2": page.getByTestId("accounts-range"),
    account: page.getByTestId("ledger-range"),
    plans: page.getByRole("heading", { level: 1, name: "Plans" }),
    audit: page.locator("#audit-scope"),
  }[name]!;
  await expectText(marker, ready);
  // Views keep their last drawing while hidden: wait until this one is the one shown.
  await page.locator(`#${name.replace("-page-2", "")}-view`).waitFor({ state: "visible" });
}

describe.each(Object.entries(WIDTHS))("the console at %s width", (width, pixels) => {
  beforeAll(async () => {
    await watched.page.setViewportSize({ width: pixels, height: 900 });
  });

  for (const [name, hash, ready] of VIEWS) {
    it(`${name}: nothing overflows sideways, no table needs a sideways scroll, nothing in a cell is cut unseen; screenshot saved`, async () => {
      await open(name, hash(), ready);
      const { page } = watched;
      // The day-by-day table inside too, opened for this check only.
      const days = page.locator("#account-view details.day-table");
      if (name === "account") await days.evaluate((node: HTMLDetailsElement) => (node.open = true));
      // The screenshot first, so that it shows what a failing check below found.
      const file = join(shots, `${name}-${width}-${pixels}.png`);
      await page.screenshot({ path: file, fullPage: true });
      expect(statSync(file).size).toBeGreaterThan(10_000);
      const found = [
        ...(await horizontalOverflow(page)),
        ...(await actionsOutOfView(page)),
        ...(await tablesWiderThanTheirBox(page)),
        ...(await cutCells(page)),
      ];
      if (name === "account") await days.evaluate((node: HTMLDetailsElement) => (node.open = false));
      expect(found, `at ${pixels}px, ${name} (${file}):\n${found.join("\n")}`).toEqual([]);
    });
  }

  it("the account's chart and tables stay inside the window; at phone width no table scrolls sideways", async () => {
    await open("account", `#/accounts/${busy}`, "Entries 1–20, newest first");
    const { page } = watched;
    const boxes = await page.evaluate(() =>
      [...document.querySelectorAll("#account-view .table-scroll, #account-view svg")]
        .filter((node) => node.getBoundingClientRect().width > 0)
        .map((node) => ({ right: node.getBoundingClientRect().right, scrolls: node.scrollWidth > node.clientWidth })),
    );
    expect(boxes.length).toBeGreaterThanOrEqual(4);
    for (const box of boxes) expect(box.right, JSON.stringify(boxes)).toBeLessThanOrEqual(pixels);
    // At phone width the tables' rows stack: none is left to scroll sideways.
    if (pixels === WIDTHS.phone)
      expect(
        boxes.some((box) => box.scrolls),
        JSON.stringify(boxes),
      ).toBe(false);
  });
});

describe("what actions add to a page fits too", () => {
  beforeAll(() => tamper(server.database, `UPDATE accounts SET balance_micro = balance_micro + 1 WHERE id = '${busy}'`));

  /** No overflow with what the last action showed still on the page; a screenshot of it. */
  async function expectFits(name: string, width: string, pixels: number) {
    const overflow = await horizontalOverflow(watched.page);
    expect(overflow, `at ${pixels}px, ${name} after actions:\n${overflow.join("\n")}`).toEqual([]);
    await watched.page.screenshot({ path: join(shots, `${name}-after-actions-${width}-${pixels}.png`), fullPage: true });
  }

  for (const [width, pixels] of Object.entries(WIDTHS)) {
    it(`at ${width} width: a new key and a refused top-up, then ledger mismatches`, async () => {
      const { page } = watched;
      await page.setViewportSize({ width: pixels, height: 900 });
      await open("account", `#/accounts/${busy}`, "Entries 1–20, newest first");
      await page.getByRole("button", { name: "Create key", exact: true }).click();
      await expectText(page.getByTestId("new-key"), /^tjs_/);
      await page.getByLabel("Top-up amount (€)", { exact: true }).fill("12.345.67");
      await page.getByRole("button", { name: "Top up", exact: true }).click();
      await expectText(page.locator("#top-up-form").getByRole("alert"), /decimal euro amount/);
      expect(await page.locator("#new-key-box").isVisible()).toBe(true);
      await expectFits("account", width, pixels);
      expect(await actionsOutOfView(page)).toEqual([]);
      // The key's Revoke button is in view as it is: no sideways scroll is needed to reach it.
      const revoke = page.getByRole("button", { name: /^Revoke key / }).first();
      expect(
        await revoke.evaluate((button) => {
          const rect = button.getBoundingClientRect();
          return rect.left >= 0 && rect.right <= window.innerWidth && rect.width > 0;
        }),
      ).toBe(true);
      await open("overview", "#/overview", "Ready");
      await page.getByRole("button", { name: "Run ledger check", exact: true }).click();
      await expectText(page.getByTestId("ledger-check-status"), /^1 mismatch in 32 accounts, checked /);
      await page.locator("#mismatch-rows tr").first().waitFor();
      await expectFits("overview", width, pixels);
      // Chromium logged the refused top-up (400) as a failed fetch.
      const failed = watched.problems.findIndex((problem) => problem.includes("status of 400"));
      expect(failed, watched.problems.join("\n")).toBeGreaterThanOrEqual(0);
      watched.problems.splice(failed, 1);
    });
  }
});

describe("the busy account's figures", () => {
  it("charts four questions today (three with one key, one with another), charged at €2 per million tokens", async () => {
    await open("account", `#/accounts/${busy}`, "Entries 1–20, newest first");
    const { page } = watched;
    const bars = (chart: string) =>
      page.locator(`[data-testid="chart-${chart}"] rect.bar`).evaluateAll((rects) => rects.map((r) => Number(r.getAttribute("data-value"))));
    expect(await bars("questions")).toEqual([4]);
    const [charged] = await bars("euros");
    const ledger = await server.services.accounts.entries(busy, { limit: 500 });
    const expected = ledger.filter((entry) => entry.kind === "charge").reduce((sum, entry) => sum - entry.amountMicro, 0);
    expect(charged, show(await adminCall(server, "GET", `/admin/v1/accounts/${busy}/usage`))).toBe(expected);
    expect(expected).toBeGreaterThan(0);
  });

  it("raised no console error, CSP violation, page error or alert", () => {
    expect(watched.problems, watched.problems.join("\n")).toEqual([]);
    expect(watched.alerts, watched.alerts.join("\n")).toEqual([]);
  });
});
