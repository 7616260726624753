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

/** The widths the console must work at: a desktop window and a phone held upright. */
export const WIDTHS = { desktop: 1280, phone: 400 } as const;

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
          found.push(`${name} spans ${Math.round(rect.left)}..${Math.round(rect.right)}px, outside its scrolling box ${Math.round(box.left)}..${Math.round(box.right)}px`);
          break;
        }
      }
    }
    return found;
  });
}
