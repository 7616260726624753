/**
 * Writes the settings tables of docs/operations/configuration.md from the configuration schema
 * (src/config/schema.ts), between the page's settings markers; the rest of the page is kept.
 *
 *   npm run docs:settings
 */
import { readFileSync, writeFileSync } from "node:fs";
import { SETTINGS_PAGE, withSettingsTables } from "../src/config/settings-page.js";

const path = new URL(`../${SETTINGS_PAGE}`, import.meta.url);
const before = readFileSync(path, "utf8");
const after = withSettingsTables(before);
if (after === before) console.log(`${SETTINGS_PAGE}: up to date`);
else {
  writeFileSync(path, after);
  console.log(`${SETTINGS_PAGE}: written`);
}
