import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/** Debian's chromium; `.ci/run` installs it. playwright-core brings no browser of its own. */
export const CHROMIUM_PATH = process.env.JUDGE_TEST_CHROMIUM ?? "/usr/bin/chromium";

/** A headless Chromium for end-to-end tests; one per test file keeps them fast. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `no Chromium at ${CHROMIUM_PATH}: install it (apt-get install chromium) or point JUDGE_TEST_CHROMIUM at one`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}
