import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../testing/browser.js";
import { tinyFixturePath } from "../testing/fixture.js";
import { postJudgment, show } from "../testing/http-client.js";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../testing/server.js";
import { expectText, watchedPage, type WatchedPage } from "./browser-test-helpers.js";

/** The account page's usage by model, in a real Chromium, on a server with two models (JUDGE_MODELS). */

let server: TestServer;
let browser: Browser;
let watched: WatchedPage;

beforeAll(async () => {
  const fixture = await tinyFixturePath();
  const file = join(mkdtempSync(join(tmpdir(), "judge-console-models-")), "models.json");
  const model = (id: string, price_multiplier: number) => ({ id, engine: "llama", model: fixture, threads: 1, slots: 1, price_multiplier });
  writeFileSync(file, JSON.stringify({ models: [model("small", 1), model("big", 3)] }));
  [server, browser] = await Promise.all([startTestServer({ env: { JUDGE_MODELS: file }, plan: { allowanceQuestions: 100 } }), launchChromium()]);
  watched = await watchedPage(browser);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("the console's usage by model", () => {
  it("shows the period's requests and allowance units per model on the account page", async () => {
    for (const model of ["small", "big", "big"]) {
      const response = await postJudgment(server, { state: "s", questions: { q: { type: "noul", instructions: "x" } }, model });
      expect(response.status, show(response)).toBe(200);
    }
    const { page } = watched;
    await page.goto(`${server.url}/console`);
    await page.getByLabel("Admin token", { exact: true }).fill(TEST_ADMIN_TOKEN);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await page.goto(`${server.url}/console#/accounts/${server.accountId}`);
    const table = page.getByTestId("usage-by-model");
    await expectText(table.getByRole("row").filter({ hasText: "big" }), /big\s*2\s*6\s*\d+\s*€0\.00/);
    await expectText(table.getByRole("row").filter({ hasText: "small" }), /small\s*1\s*1\s*\d+/);
    expect(watched.problems).toEqual([]);
  });
});
