import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_STATUS, ERROR_TYPE, type ErrorCode } from "./errors.js";

/** The error tables of docs/interface/errors.md and the catalogue must say the same thing, both ways. */

const page = readFileSync(new URL("../docs/interface/errors.md", import.meta.url), "utf8");

interface Row {
  line: string;
  status: number;
  codes: string[];
  types: string[];
}

/** Rows of the page's tables that start with a status: `| 402 | \`insufficient_funds\` | \`billing_error\` | … |`. */
function documentedRows(): Row[] {
  const rows: Row[] = [];
  for (const [line, status, codes, types] of page.matchAll(/^\| (\d{3}) \| ([^|]*) \| ([^|]*) \|.*$/gm)) {
    const names = (cell: string) => [...cell.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    rows.push({ line, status: Number(status), codes: names(codes), types: names(types) });
  }
  return rows;
}

describe("the error tables of docs/interface/errors.md", () => {
  const rows = documentedRows();
  const show = (value: unknown) => JSON.stringify(value, null, 1);

  it("are found (rows of status, code, error_type, when)", () => {
    expect(rows.length, show(rows)).toBeGreaterThanOrEqual(10);
  });

  it("name only codes of the catalogue, each with the status the catalogue gives it", () => {
    const wrong = rows.flatMap((row) =>
      row.codes.filter((code) => !Object.hasOwn(ERROR_STATUS, code) || ERROR_STATUS[code as ErrorCode] !== row.status).map((code) => ({ code, row: row.line })),
    );
    expect(wrong, show(wrong)).toEqual([]);
  });

  it("give each row's codes the error_type the catalogue gives them, and only that one", () => {
    const wrong = rows.filter((row) => {
      const expected = [...new Set(row.codes.map((code) => ERROR_TYPE[code as ErrorCode]))];
      return JSON.stringify(row.types) !== JSON.stringify(expected);
    });
    expect(
      wrong.map((row) => row.line),
      show(wrong),
    ).toEqual([]);
  });

  it("list every code of the catalogue, exactly once", () => {
    const listed = rows.flatMap((row) => row.codes);
    const missing = Object.keys(ERROR_STATUS).filter((code) => !listed.includes(code));
    const twice = listed.filter((code, i) => listed.indexOf(code) !== i);
    expect({ missing, twice }, "codes missing from or repeated in docs/interface/errors.md's tables").toEqual({ missing: [], twice: [] });
  });
});

describe("the error catalogue", () => {
  it("gives every code a hosted-service error type, and types no code it does not have", () => {
    expect(Object.keys(ERROR_TYPE).sort()).toEqual(Object.keys(ERROR_STATUS).sort());
  });

  it("uses the hosted service's own types for its own refusals", () => {
    expect({
      missing_api_key: ERROR_TYPE.missing_api_key,
      invalid_api_key: ERROR_TYPE.invalid_api_key,
      invalid_request: ERROR_TYPE.invalid_request,
      unknown_model: ERROR_TYPE.unknown_model,
      insufficient_funds: ERROR_TYPE.insufficient_funds,
      over_budget: ERROR_TYPE.over_budget,
    }).toEqual({
      missing_api_key: "authentication_error",
      invalid_api_key: "authentication_error",
      invalid_request: "api_usage_error",
      unknown_model: "api_usage_error",
      insufficient_funds: "billing_error",
      over_budget: "max_tokens_exceeded",
    });
  });

  it("types every 5xx api_error and no 4xx so", () => {
    const wrong = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ERROR_STATUS[code] >= 500 !== (ERROR_TYPE[code] === "api_error"));
    expect(wrong).toEqual([]);
  });
});
