import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_STATUS, type ErrorCode } from "./errors.js";

/** The README's error table and the catalogue must say the same thing. */

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

/** Rows of the README's tables that start with a status: `| 402 | \`insufficient_funds\` | … |`. */
function documentedStatuses(): Map<string, number[]> {
  const found = new Map<string, number[]>();
  for (const [, status, codes] of readme.matchAll(/^\| (\d{3}) \| ([^|]*) \|/gm)) {
    for (const [, code] of codes.matchAll(/`([a-z_]+)`/g)) found.set(code, [...(found.get(code) ?? []), Number(status)]);
  }
  return found;
}

describe("the README's error table", () => {
  const table = documentedStatuses();

  it("lists every code with the status the catalogue gives it, and no code the catalogue lacks", () => {
    const wrong = [...table].filter(([code, statuses]) => statuses.some((s) => s !== ERROR_STATUS[code as ErrorCode]));
    expect(wrong, JSON.stringify([...table])).toEqual([]);
  });

  it("mentions every code of the catalogue (the admin API's and the log-only ones in prose)", () => {
    const missing = Object.keys(ERROR_STATUS).filter((code) => !table.has(code) && !readme.includes(`\`${code}\``));
    expect(missing, "codes missing from README.md").toEqual([]);
  });

  it("has every public code in the table itself", () => {
    const prose = ["account_not_found", "plan_not_found", "key_not_found", "plan_exists", "service_unavailable", "client_closed_request"];
    const outside = Object.keys(ERROR_STATUS).filter((code) => !prose.includes(code) && !table.has(code));
    expect(outside, "codes only in prose").toEqual([]);
  });
});
