import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTask, fittedTask, startFit } from "../routes/admin/tasks-test-helpers.js";
import { gatedEngine, type GatedEngine } from "../routes/tasks/test-helpers.js";
import { launchChromium } from "../testing/browser.js";
import { readyTinyEngine, startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../testing/server.js";
import { actionsOutOfView, cutCells, expectText, horizontalOverflow, WIDTHS, watchedPage, type WatchedPage } from "./browser-test-helpers.js";

/**
 * A tenant's tasks in the console, in a real Chromium against the real server on the fixture
 * model: the account page lists them with their latest fit, a fitted task's view shows each
 * question's held-out table, class counts and reliability diagram, and a running fit's progress
 * is followed, on the task's view and in the account's table, until its new version is there.
 */

let server: TestServer;
let engine: GatedEngine;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let support: string;
let held: string;
let release: () => void;

beforeAll(async () => {
  engine = gatedEngine(await readyTinyEngine());
  [server, browser] = await Promise.all([startTestServer({ engine }), launchChromium()]);
  support = await fittedTask(server, "support");
  held = await createTask(server, "held");
  const gate = engine.holdAfter(2);
  release = gate.release;
  await startFit(server, held);
  await gate.entered;
  watched = await watchedPage(browser);
  page = watched.page;
  await page.goto(`${server.url}/console`);
  await page.getByLabel("Admin token", { exact: true }).fill(TEST_ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
});
afterAll(async () => {
  engine?.releaseAll();
  await browser?.close();
  await server?.close();
  await engine?.close();
});

const HEADS = ["Prior", "Plain readout", "Level 1", "Level 2"];

describe("a tenant's tasks in the console", () => {
  it("lists the account's tasks: questions, examples, the latest fit with its progress, the latest version", async () => {
    await page.evaluate((hash) => (location.hash = hash), `#/accounts/${server.accountId}`);
    await page.getByRole("heading", { name: "Tasks", exact: true }).waitFor();
    const row = page.getByTestId("task-row-support");
    await expectText(row, /support\s*task_\S+\s*angry, team\s*6\s*succeeded\s*6 of 6\s*v1/);
    await expectText(page.getByTestId("task-fit-held"), /^running\s*\d of 6 examples read$/);
    expect(await page.getByTestId("task-row-held").locator("progress").getAttribute("max")).toBe("6");
  });

  it("opens a fitted task: per question the chosen head, the held-out table, the class counts and the reliability diagram", async () => {
    await page.getByRole("link", { name: "support", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "support" }).waitFor();
    await expectText(page.getByTestId("task-id"), support);
    await expectText(page.getByTestId("task-latest-fit"), /succeeded/);
    expect(await page.getByTestId("version-1").getAttribute("open")).not.toBeNull();
    for (const question of ["angry", "team"]) {
      const prefix = `report-1-${question}`;
      await expectText(
        page.getByTestId(`${prefix}-chosen`),
        /^Answered by (plain readout|level 1|level 2)\. Held-out figures from \d-fold cross-validation over 6 examples\.$/,
      );
      const table = page.getByTestId(`${prefix}-metrics`);
      expect(await table.locator("thead th").allTextContents()).toEqual(["Readout", "Accuracy", "Macro-F1", "NLL", "ECE", "Brier"]);
      const rows = await table.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent?.trim())));
      expect(rows.map((cells) => cells[0]?.replace(/chosen$/, ""))).toEqual(HEADS);
      for (const cells of rows.slice(0, 3))
        expect(
          cells.slice(1).every((cell) => /^\d+\.\d{3}$/.test(cell ?? "")),
          JSON.stringify(rows),
        ).toBe(true);
      expect(rows.filter((cells) => cells[0]?.endsWith("chosen"))).toHaveLength(1);
      const classes = question === "angry" ? ["true", "false"] : ["billing", "tech"];
      expect(await page.getByTestId(`${prefix}-classes`).locator("tbody tr").allTextContents()).toEqual(classes.map((name) => `${name}3`));
      const diagram = page.getByTestId(`${prefix}-reliability`);
      expect(await diagram.evaluate((node) => node.namespaceURI + node.localName)).toBe("http://www.w3.org/2000/svgsvg");
      expect(await diagram.getAttribute("aria-label")).toMatch(/^Reliability of .+: 6 answers in \d+ bins, ECE \d\.\d{3}$/);
      const counts = await diagram.locator("g.rel-bin").evaluateAll((bins) => bins.map((bin) => Number(bin.getAttribute("data-count"))));
      expect(counts.reduce((sum, n) => sum + n, 0)).toBe(6);
      expect(await diagram.evaluate((svg) => svg.getBoundingClientRect().width)).toBeGreaterThan(150);
    }
  });

  it("fits the window at phone width, nothing cut or out of view", async () => {
    await page.setViewportSize({ width: WIDTHS.phone, height: 900 });
    // Rows stack as cards there, each figure beside its column's heading (tables.js labels the report's tables too).
    const labels = await page
      .getByTestId("report-1-team-metrics")
      .locator("tbody tr")
      .first()
      .locator("td")
      .evaluateAll((tds) => tds.map((td) => td.dataset.label));
    expect(labels).toEqual(["Accuracy", "Macro-F1", "NLL", "ECE", "Brier"]);
    const found = [...(await horizontalOverflow(page)), ...(await actionsOutOfView(page)), ...(await cutCells(page))];
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });
    expect(found, found.join("\n")).toEqual([]);
  });

  it("shows a running fit's progress, and redraws into its first version once the fit is done", async () => {
    await page.getByRole("link", { name: "← The account" }).click();
    await page.getByRole("link", { name: "held", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "held" }).waitFor();
    await expectText(page.getByTestId("task-latest-fit"), /^running\s*\d of 6 examples read$/);
    await expectText(page.getByTestId("task-versions"), /No version yet/);
    release();
    await expectText(page.getByTestId("task-latest-fit"), /^succeeded\s*6 of 6$/);
    await page.getByTestId("report-1-team-metrics").waitFor();
    expect(await page.getByTestId("report-1-team-reliability").locator("g.rel-bin").count()).toBeGreaterThan(0);
  });

  it("the account's tasks table follows a running fit too, to its new version", async () => {
    const gate = engine.holdAfter(2);
    await startFit(server, held);
    await gate.entered;
    await page.getByRole("link", { name: "← The account" }).click();
    await expectText(page.getByTestId("task-fit-held"), /^running\s*\d of 6 examples read$/);
    gate.release();
    await expectText(page.getByTestId("task-row-held"), /succeeded\s*6 of 6\s*v2/);
  });

  it("raised no console error, CSP violation, page error or alert", () => {
    expect(watched.problems, watched.problems.join("\n")).toEqual([]);
    expect(watched.alerts, watched.alerts.join("\n")).toEqual([]);
  });
});
