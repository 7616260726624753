import type { Browser, Locator, Page } from "playwright-core";
import { expect } from "vitest";

/** What the console's browser tests share: a watched page, poll-until-true text checks, layout checks. */

export interface WatchedPage {
  page: Page;
  /** Console errors, uncaught exceptions and CSP violations: a test ends by expecting none. */
  problems: string[];
  /** Any alert() would mean an account name ran as script. */
  alerts: string[];
}

/** A page whose console errors, page errors and dialogs are recorded; confirm() dialogs are accepted. */
export async function watchedPage(browser: Browser, viewport = { width: 1280, height: 900 }): Promise<WatchedPage> {
  const page = await browser.newPage({ viewport });
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  const alerts: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("dialog", async (dialog) => {
    if (dialog.type() === "confirm") return dialog.accept();
    alerts.push(`${dialog.type()}: ${dialog.message()}`);
    return dialog.dismiss();
  });
  return { page, problems, alerts };
}

export async function expectText(locator: Locator, expected: string | RegExp): Promise<void> {
  await expect.poll(async () => (await locator.textContent())?.trim(), { timeout: 10_000 }).toMatch(expected);
}

/**
 * Everything that sticks out of the viewport sideways: the page itself wider than the window,
 * or any visible element past either edge that is not inside a box that scrolls (or clips) it.
 */
export function horizontalOverflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const found: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > width) found.push(`the page is ${root.scrollWidth}px wide in a ${width}px window`);
    // A box clips what it contains, except what is positioned against a box outside it.
    const clipped = (node: Element) => {
      const position = getComputedStyle(node).position;
      if (position === "fixed") return false;
      const containingBlock = position === "absolute" ? (node as HTMLElement).offsetParent : null;
      let reached = containingBlock === null;
      for (let parent = node.parentElement; parent && parent !== document.body; parent = parent.parentElement) {
        reached ||= parent === containingBlock;
        if (reached && ["auto", "scroll", "hidden"].includes(getComputedStyle(parent).overflowX)) return true;
      }
      return false;
    };
    for (const node of document.querySelectorAll("body *")) {
      const rect = node.getBoundingClientRect();
      if (rect.width === 0 && rect.height === 0) continue;
      if (rect.left >= -0.5 && rect.right <= width + 0.5) continue;
      if (clipped(node)) continue;
      const name = `${node.tagName.toLowerCase()}${node.id ? `#${node.id}` : ""}${node.getAttribute("class") ? `.${node.getAttribute("class")}` : ""}`;
      found.push(`${name} spans ${Math.round(rect.left)}..${Math.round(rect.right)}px: "${(node.textContent ?? "").trim().slice(0, 60)}"`);
    }
    return found;
  });
}

/** The widths the console must work at: a desktop window, a small laptop's and a phone held upright. */
export const WIDTHS = { desktop: 1280, laptop: 1024, phone: 400 } as const;

/** Every visible table box whose table is wider than the box, so that part of it is reached only by scrolling sideways. */
export function tablesWiderThanTheirBox(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll(".table-scroll")]
      .filter((box) => box.getClientRects().length > 0 && box.scrollWidth > box.clientWidth + 1)
      .map(
        (box) =>
          `${box.id ? `#${box.id}` : `the table of "${box.querySelector("th")?.textContent?.trim()}…"`} is ${box.scrollWidth}px wide in its ${box.clientWidth}px box`,
      ),
  );
}

/**
 * Every visible table cell whose content does not fit it: spilling over its neighbours, or cut
 * (an ellipsis, a clipped box) without a title that holds the whole of what was cut.
 */
export function cutCells(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const clips = (node: Element) => getComputedStyle(node).overflowX !== "visible";
    for (const cell of document.querySelectorAll("td, th")) {
      if (cell.getClientRects().length === 0 || cell.closest(".visually-hidden")) continue;
      for (const node of [cell, ...cell.querySelectorAll("*")]) {
        if (node.classList.contains("visually-hidden") || node.scrollWidth <= node.clientWidth + 1) continue;
        const text = (node.textContent ?? "").trim();
        const where = `${cell.tagName.toLowerCase()} "${(cell.textContent ?? "").trim().slice(0, 60)}" (${node.scrollWidth}px in ${node.clientWidth}px)`;
        if (!clips(node)) {
          // A cell too narrow for what it holds draws it over the next cell; inside a cell, what spills is caught by the cell.
          if (node === cell) found.push(`${where} spills over its neighbours`);
          continue;
        }
        const title = node.closest("[title]")?.getAttribute("title") ?? "";
        if (!cell.contains(node.closest("[title]")) || !title.includes(text)) found.push(`${where} is cut, with no title holding "${text.slice(0, 60)}"`);
      }
    }
    return found;
  });
}

/**
 * Every visible button, link, field or select whose box is not wholly in view sideways: past
 * either edge of the window, or outside a box that scrolls or clips it (the Revoke button in a
 * table that must be scrolled sideways to reach it). Each is named by its text or label.
 */
export function actionsOutOfView(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const found: string[] = [];
    for (const node of document.querySelectorAll("button, a[href], select, input, summary")) {
      const rect = node.getBoundingClientRect();
      if (rect.width === 0 && rect.height === 0) continue;
      const name = `${node.tagName.toLowerCase()} "${(node.getAttribute("aria-label") ?? node.textContent ?? node.id).trim().slice(0, 50)}"`;
      if (rect.left < -0.5 || rect.right > width + 0.5) {
        found.push(`${name} spans ${Math.round(rect.left)}..${Math.round(rect.right)}px in a ${width}px window`);
        continue;
      }
      for (let parent = node.parentElement; parent && parent !== document.body; parent = parent.parentElement) {
        if (getComputedStyle(parent).overflowX === "visible") continue;
        const box = parent.getBoundingClientRect();
        if (rect.left < box.left - 0.5 || rect.right > box.right + 0.5) {
          found.push(
            `${name} spans ${Math.round(rect.left)}..${Math.round(rect.right)}px, outside its scrolling box ${Math.round(box.left)}..${Math.round(box.right)}px`,
          );
          break;
        }
      }
    }
    return found;
  });
}
