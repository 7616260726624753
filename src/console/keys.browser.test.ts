import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatEuros } from "../money/money.js";
import { TINY_JUDGMENT } from "../testing/admin-client.js";
import { launchChromium } from "../testing/browser.js";
import { postJudgment, show } from "../testing/http-client.js";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../testing/server.js";
import { expectText, watchedPage, type WatchedPage } from "./browser-test-helpers.js";

/**
 * A key's own limits in the console, in a real headless Chromium against the real server:
 * created with a budget, a rate limit and an expiry, its spend shown once it is used, renamed
 * and its limits changed with the same form, a bad value refused beside the form.
 */

let server: TestServer;
let browser: Browser;
let watched: WatchedPage;
let page: Page;

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startTestServer({ plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 5_000_000 }),
    launchChromium(),
  ]);
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

describe("keys with limits in the console", () => {
  let key: string;
  let prefix: string;

  it("creates a key with a budget, a rate limit and an expiry, and lists them", async () => {
    await page.goto(`${server.url}/console`);
    await label("Admin token").fill(TEST_ADMIN_TOKEN);
    await button("Sign in").click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await page.goto(`${server.url}/console#/accounts/${server.accountId}`);
    await label("Key name").fill("limited key");
    await label("Key requests per minute").fill("7");
    await label("Key budget (€)").fill("0.0003");
    await label("Key expires").fill("2099-12-31");
    await button("Create key").click();
    await expectText(testId("new-key"), /^tjs_\S+$/);
    key = (await testId("new-key").textContent())!;
    const record = (await server.store.keys.list({ accountId: server.accountId })).find((r) => r.name === "limited key")!;
    prefix = record.prefix;
    expect(record.limits, JSON.stringify(record)).toEqual({ requestsPerMinute: 7, budgetMicro: 300, expiresAt: Date.UTC(2099, 11, 31) });
    await expectText(testId(`key-spend-${prefix}`), "€0.00 of €0.0003");
    await expectText(testId(`key-limits-${prefix}`), "7/min, expires 2099-12-31 00:00 UTC");
  });

  it("shows what the key spent of its budget once it is used, and the 402 once it is reached", async () => {
    let refused;
    for (let i = 0; i < 100 && !refused; i++) {
      const judged = await postJudgment({ url: server.url, key }, TINY_JUDGMENT);
      if (judged.status === 402) refused = judged;
      else expect(judged.status, show(judged)).toBe(200);
      if (i === 5) throw new Error(`the budget was never reached: ${show(judged)}`);
    }
    expect(refused!.json.code, show(refused!)).toBe("key_budget_exhausted");
    const { spentMicro } = (await server.store.keys.list({ accountId: server.accountId })).find((r) => r.prefix === prefix)!;
    await button("Refresh").click();
    expect(spentMicro, "two requests of ~137 tokens fit in 300 µ€, a third does not").toBeGreaterThan(150);
    await expectText(testId(`key-spend-${prefix}`), `€${formatEuros(spentMicro)} of €0.0003`);
  });

  it("renames the key and changes its limits with the same form; an empty field clears a limit", async () => {
    await button(`Edit key ${prefix}`).click();
    expect(await label("Key budget (€)").inputValue()).toBe("0.0003");
    await label("Key name").fill("renamed key");
    await label("Key requests per minute").fill("");
    await label("Key budget (€)").fill("1.00");
    await button(`Save key ${prefix}`).click();
    await expectText(page.locator("#create-key-form").getByRole("status"), `Saved key ${prefix}…`);
    await expectText(page.locator("#key-rows tr").filter({ hasText: "renamed key" }), /of €1\.00\s*expires 2099-12-31 00:00 UTC/);
    const record = (await server.store.keys.list({ accountId: server.accountId })).find((r) => r.prefix === prefix)!;
    expect([record.name, record.limits], JSON.stringify(record)).toEqual([
      "renamed key",
      { requestsPerMinute: null, budgetMicro: 1_000_000, expiresAt: Date.UTC(2099, 11, 31) },
    ]);
    const paid = await postJudgment({ url: server.url, key }, TINY_JUDGMENT);
    expect(paid.status, show(paid)).toBe(200);
    expect(await button("Create key").isVisible(), "the form is back to creating").toBe(true);
  });

  it("refuses a bad expiry beside the form and changes nothing", async () => {
    const before = await server.store.keys.list({ accountId: server.accountId });
    await button(`Edit key ${prefix}`).click();
    await label("Key expires").fill("next week");
    await button(`Save key ${prefix}`).click();
    await expectText(page.locator("#create-key-form").getByRole("alert"), /expires_at/);
    await expect.poll(() => watched.problems.filter((p) => p.includes("status of 400")).length).toBe(1);
    watched.problems.splice(0, watched.problems.length, ...watched.problems.filter((p) => !p.includes("status of 400")));
    await button("Cancel editing").click();
    expect(await server.store.keys.list({ accountId: server.accountId })).toEqual(before);
    expect(watched.problems, watched.problems.join("\n")).toEqual([]);
    expect(watched.alerts).toEqual([]);
  });
});
