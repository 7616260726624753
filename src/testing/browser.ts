import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/** Debian's chromium; scripts/install-test-deps.sh installs it. playwright-core brings no browser of its own. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/** A headless Chromium for end-to-end tests; one per test file keeps them fast. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: install it with scripts/install-test-deps.sh (apt-get install chromium)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}
