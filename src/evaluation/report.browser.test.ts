import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../testing/browser.js";
import { calibrateCommand, evalCommand, type CommandIo } from "./commands.js";
import { startFakeJudgeServer, type FakeJudgeServer } from "../testing/fake-judge-server.js";
import { evilDatasetText, variedReplyWithLogits } from "./report-test-helpers.js";

/**
 * The reports as written by `judge eval` and `judge calibrate`, opened in a real headless
 * Chromium: what is drawn fills the diagram's canvas without spilling out of it, no two texts
 * overlap, every colour on the page or in a diagram has a legend entry, and a phone-width
 * window needs no sideways scrolling outside the tables' own scroll boxes.
 */

const show = (value: unknown) => JSON.stringify(value, null, 1).slice(0, 6000);
const io: CommandIo = { stderr: () => {}, stderrIsTTY: false };
const server = { url: "", key: "k", concurrency: 4, retries: 0, timeoutMs: 10_000 };

let dir: string;
let judge: FakeJudgeServer;
let browser: Browser;
let page: Page;
const files = { eval: "", evalSvg: "", calibrate: "", calibrateSvg: "" };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "judge-reports-"));
  const dataset = join(dir, "evil <&>.jsonl");
  writeFileSync(dataset, evilDatasetText(30));
  [judge, browser] = await Promise.all([startFakeJudgeServer((body) => variedReplyWithLogits(body)), launchChromium()]);
  server.url = judge.url;
  const evalOut = join(dir, "eval");
  const calibrateOut = join(dir, "calibrate");
  // The command's default error rates: the metrics table as wide as a user gets it.
  await evalCommand(dataset, { ...server, out: evalOut, errorRates: [0.01, 0.05, 0.1], seed: 1, checks: { order: "shuffle", ids: true } }, io);
  await calibrateCommand(dataset, { ...server, out: calibrateOut, profile: join(dir, "profile.json"), holdout: 0.3, seed: 1, minBucket: 5, dryRun: false }, io);
  Object.assign(files, {
    eval: join(evalOut, "report.html"),
    evalSvg: join(evalOut, "reliability.svg"),
    calibrate: join(calibrateOut, "report.html"),
    calibrateSvg: join(calibrateOut, "reliability.svg"),
  });
  page = await browser.newPage();
});
afterAll(async () => {
  await browser?.close();
  await judge?.close();
  rmSync(dir, { recursive: true, force: true });
});

const open = (file: string) => page.goto(pathToFileURL(file).href);

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/**
 * For every <svg> in the document: its viewBox and the box of everything drawn in it (but the
 * white background) in viewBox units, and every text's box, so tests can check fit and overlaps.
 */
function measureDiagrams(page: Page) {
  return page.evaluate(() => {
    return [...document.querySelectorAll("svg")].map((svg) => {
      const view = svg.viewBox.baseVal;
      const frame = svg.getBoundingClientRect();
      // Screen to viewBox units: the inverse of the root's own scale and offset (no rotation at the root).
      const ctm = svg.getScreenCTM()!;
      const toView = (r: DOMRect) => ({
        left: (r.left - ctm.e) / ctm.a,
        top: (r.top - ctm.f) / ctm.d,
        right: (r.right - ctm.e) / ctm.a,
        bottom: (r.bottom - ctm.f) / ctm.d,
      });
      const drawn = [...svg.querySelectorAll("rect, line, text")]
        .filter((e) => !e.classList.contains("background"))
        .map((e) => toView(e.getBoundingClientRect()));
      const content = drawn.reduce((a, b) => ({
        left: Math.min(a.left, b.left),
        top: Math.min(a.top, b.top),
        right: Math.max(a.right, b.right),
        bottom: Math.max(a.bottom, b.bottom),
      }));
      const texts = [...svg.querySelectorAll("text")].map((t) => ({ text: t.textContent ?? "", box: toView(t.getBoundingClientRect()) }));
      return { view: { width: view.width, height: view.height }, frame: { width: frame.width, height: frame.height }, scale: ctm.a, content, texts };
    });
  });
}

const overlap = (a: Box, b: Box) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;

function expectReadable(diagram: Awaited<ReturnType<typeof measureDiagrams>>[number], name: string): void {
  const { view, content, texts } = diagram;
  const context = `${name}: ${show({ view, content })}`;
  // Nothing spills out of the canvas, and no more than 4% of it is left empty on any side.
  expect(content.left, context).toBeGreaterThanOrEqual(-0.5);
  expect(content.top, context).toBeGreaterThanOrEqual(-0.5);
  expect(content.right, context).toBeLessThanOrEqual(view.width + 0.5);
  expect(content.bottom, context).toBeLessThanOrEqual(view.height + 0.5);
  expect(content.left, context).toBeLessThanOrEqual(0.04 * view.width);
  expect(content.top, context).toBeLessThanOrEqual(0.04 * view.height);
  expect(view.width - content.right, context).toBeLessThanOrEqual(0.04 * view.width);
  expect(view.height - content.bottom, context).toBeLessThanOrEqual(0.04 * view.height);
  const clashes = texts.flatMap((a, i) =>
    texts
      .slice(i + 1)
      .filter((b) => overlap(a.box, b.box))
      .map((b) => `"${a.text}" / "${b.text}"`),
  );
  expect(clashes, `${name}: texts drawn over each other`).toEqual([]);
}

/** Colours (with opacity and dash) painted outside the legends, that no legend of the same scope shows. */
function unexplainedColours(page: Page) {
  return page.evaluate(() => {
    const paintOf = (e: Element) => {
      const s = getComputedStyle(e);
      const out: string[] = [];
      if (e instanceof SVGElement) {
        if (e.tagName === "text") return out;
        if (s.fill !== "none") out.push(`fill ${s.fill} ${s.fillOpacity}`);
        if (s.stroke !== "none") out.push(`stroke ${s.stroke} ${s.strokeDasharray}`);
      } else if (s.backgroundColor !== "rgba(0, 0, 0, 0)") out.push(`background ${s.backgroundColor}`);
      return out;
    };
    const scopes: Element[] = [...document.querySelectorAll("svg"), ...(document.body ? [document.body] : [])];
    return scopes.flatMap((scope) => {
      const inScope = (e: Element) => (scope === document.body ? !e.closest("svg") : true);
      const all = [...scope.querySelectorAll("*")].filter(inScope);
      const legend = new Set(all.filter((e) => e.closest(".legend")).flatMap(paintOf));
      const ink = (e: Element) => e.closest(".legend, .axes") !== null || e.classList.contains("background");
      const unexplained = all
        .filter((e) => !ink(e))
        .flatMap(paintOf)
        .filter((p) => !legend.has(p));
      return [...new Set(unexplained)].map((p) => `${scope.tagName}: ${p}`);
    });
  });
}

describe("the reports in a browser", () => {
  it("reliability.svg on its own fills the window, and its drawing fills its canvas", async () => {
    for (const file of [files.evalSvg, files.calibrateSvg]) {
      for (const viewport of [
        { width: 1200, height: 800 },
        { width: 400, height: 800 },
      ]) {
        await page.setViewportSize(viewport);
        await open(file);
        const [diagram] = await measureDiagrams(page);
        const context = `${file} at ${show(viewport)}: ${show(diagram.frame)}`;
        expect(diagram.frame, context).toEqual(viewport);
        const fitted = Math.min(viewport.width / diagram.view.width, viewport.height / diagram.view.height);
        expect(diagram.scale, `${context}: drawn as large as the window allows`).toBeCloseTo(fitted, 3);
        expectReadable(diagram, file);
      }
    }
  });

  it("every diagram of both reports is readable: inside its canvas, filling it, no text over another", async () => {
    await page.setViewportSize({ width: 1200, height: 800 });
    for (const file of [files.eval, files.calibrate]) {
      await open(file);
      const diagrams = await measureDiagrams(page);
      expect(diagrams.length, file).toBe(4);
      diagrams.forEach((d, i) => expectReadable(d, `${file} diagram ${i + 1}`));
    }
  });

  it("names every colour used, on the page and in each diagram, in a legend of its own scope", async () => {
    for (const file of [files.eval, files.calibrate, files.evalSvg]) {
      await open(file);
      expect(await unexplainedColours(page), file).toEqual([]);
    }
    await open(files.eval);
    const cellColours = await page.evaluate(() => [...new Set([...document.querySelectorAll("td")].map((td) => getComputedStyle(td).backgroundColor))].length);
    expect(cellColours, "the check above saw coloured cells: plain, right and wrong").toBe(3);
  });

  it("at 1280 and 1024 px every table fits its box, no cell cut or scrolled out of view; screenshots saved", async () => {
    const shots = mkdtempSync(join(tmpdir(), "report-screenshots-"));
    console.info(`report screenshots: ${shots}`);
    for (const width of [1280, 1024]) {
      await page.setViewportSize({ width, height: 900 });
      for (const [name, file] of [
        ["eval", files.eval],
        ["calibrate", files.calibrate],
      ]) {
        await open(file);
        // The tables folded away too (the diagrams' bins), opened as a reader would.
        await page.evaluate(() => document.querySelectorAll("details").forEach((details) => (details.open = true)));
        const shot = join(shots, `${name}-${width}.png`);
        await page.screenshot({ path: shot, fullPage: true });
        const wide = await page.evaluate(() =>
          [...document.querySelectorAll("table")]
            .filter((table) => table.checkVisibility())
            .flatMap((table) => {
              const box = table.parentElement!.getBoundingClientRect();
              const cut = [...table.querySelectorAll("th, td")].filter(
                (c) => c.getBoundingClientRect().right > box.right + 0.5 || c.scrollWidth > c.clientWidth + 1,
              );
              return cut.length === 0 ? [] : [`#${table.id}: ${cut.length} cells past its ${Math.round(box.width)}px box, first "${cut[0].textContent}"`];
            }),
        );
        expect(wide, `${name} at ${width}px (${shot})`).toEqual([]);
      }
    }
  });

  it("runs nothing, and reads at phone width without sideways scrolling outside the tables' scroll boxes", async () => {
    await page.setViewportSize({ width: 400, height: 800 });
    for (const file of [files.eval, files.calibrate]) {
      await open(file);
      const layout = await page.evaluate(() => ({
        scripts: document.scripts.length,
        pageWidth: document.documentElement.scrollWidth,
        wideFigures: [...document.querySelectorAll("figure svg")].filter((svg) => svg.getBoundingClientRect().right > window.innerWidth).length,
        tables: document.querySelectorAll("table").length,
      }));
      expect(layout, file).toMatchObject({ scripts: 0, pageWidth: 400, wideFigures: 0 });
      expect(layout.tables, file).toBeGreaterThanOrEqual(2);
    }
  });
});
