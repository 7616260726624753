import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SETTING_NAMES, settingDefaults, settingDoc } from "./schema.js";
import { END, SETTINGS_PAGE, START, settingsTables, withSettingsTables } from "./settings-page.js";

/** docs/operations/configuration.md's settings tables are the schema's, regenerated and compared. */

const page = readFileSync(new URL(`../../${SETTINGS_PAGE}`, import.meta.url), "utf8");

describe("the settings page", () => {
  it("says what the schema says (run `npm run docs:settings` after changing a setting)", () => {
    expect(page).toBe(withSettingsTables(page));
  });

  it("lists every setting once, in a row with its default", () => {
    const generated = page.slice(page.indexOf(START), page.indexOf(END));
    const defaults = settingDefaults();
    for (const name of SETTING_NAMES) {
      const rows = generated.split("\n").filter((line) => line.startsWith(`| \`${name}\` |`));
      expect(rows, name).toHaveLength(1);
      if (defaults[name] !== "") expect(rows[0], name).toContain(`\`${defaults[name]}\``);
    }
  });

  it("documents every setting in the schema itself", () => {
    expect(SETTING_NAMES.filter((name) => !settingDoc(name)?.description)).toEqual([]);
  });

  it("notices a page that disagrees with the schema", () => {
    const stale = page.replace("| `JUDGE_PORT` |", "| `JUDGE_PORT_OLD` |");
    expect(stale).not.toBe(page);
    expect(withSettingsTables(stale)).toBe(page);
    expect(() => withSettingsTables("# Configuration\n")).toThrow(/markers/);
    expect(settingsTables()).toContain("## Engines");
  });
});
