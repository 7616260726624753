import { FLAG_SETTINGS, flagOf, SETTING_HELP } from "./help.js";
import { SETTING_NAMES, settingDefaults, settingDoc, type SettingName } from "./schema.js";

/**
 * The settings tables of docs/operations/configuration.md, written from the schema: each
 * setting's variable, flag, default and description (schema.ts's SETTING_DOCS, or the one-line
 * help where a setting has none). Only the text between the markers is generated, so the page's
 * own prose stays hand-written. `npm run docs:settings` writes it; settings-page.test.ts fails
 * when the page and the schema disagree.
 */

export const SETTINGS_PAGE = "docs/operations/configuration.md";
export const START = "<!-- settings:start -->";
export const END = "<!-- settings:end -->";

/** The page's sections, each starting at a setting: the schema lists the settings grouped in this order. */
const SECTIONS: { heading: string; from: SettingName }[] = [
  { heading: "Server", from: "JUDGE_HOST" },
  { heading: "Store and holds", from: "JUDGE_DB" },
  { heading: "Models and requests", from: "JUDGE_MODEL" },
  { heading: "Engines", from: "JUDGE_ENGINE" },
];

/** A table cell: pipes escaped (inside code spans too, as GitHub's tables need), one line. */
const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");

function row(name: SettingName, defaults: Record<SettingName, string>): string {
  const doc = settingDoc(name);
  const value = defaults[name];
  const note = doc?.defaultNote;
  const fallback = value === "" ? (note ?? "none") : note === undefined ? `\`${value}\`` : `\`${value}\`: ${note}`;
  const flag = FLAG_SETTINGS.includes(name) ? `\`${flagOf(name)}\`` : name === "JUDGE_DB" ? "`--db` (global)" : "environment only";
  return `| \`${name}\` | ${flag} | ${cell(fallback)} | ${cell(doc?.description ?? SETTING_HELP[name])} |`;
}

/** The generated part: one table per section, every setting in exactly one. */
export function settingsTables(): string {
  const defaults = settingDefaults();
  const starts = SECTIONS.map(({ from }) => SETTING_NAMES.indexOf(from));
  if (starts[0] !== 0 || starts.some((start, i) => i > 0 && start <= starts[i - 1])) {
    throw new Error("settings-page.ts: SECTIONS must start at settings in the schema's order, the first at its first setting");
  }
  const parts = SECTIONS.map(({ heading }, i) => {
    const names = SETTING_NAMES.slice(starts[i], starts[i + 1] ?? SETTING_NAMES.length);
    return [`## ${heading}`, "", "| Variable | Flag | Default | |", "|---|---|---|---|", ...names.map((name) => row(name, defaults))].join("\n");
  });
  const note = "<!-- Generated from src/config/schema.ts by `npm run docs:settings`: edit the descriptions there. -->";
  return [note, "", ...parts.flatMap((part) => [part, ""]), ""].join("\n");
}

/** The page with its generated part replaced; throws when the markers are missing. */
export function withSettingsTables(page: string): string {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${SETTINGS_PAGE}: the markers ${START} … ${END} are missing`);
  return `${page.slice(0, start + START.length)}\n${settingsTables()}${page.slice(end)}`;
}
