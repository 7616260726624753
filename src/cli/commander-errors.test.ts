import { describe, it } from "vitest";
import { expectOneLineUserError, runJudge } from "./test-helpers.js";

/** Commander's own refusals read like every other error of the CLI: one line, `judge: …`, exit 1. */

describe("commander's errors", () => {
  it.each([
    ["an unknown option", ["accounts", "list", "--nope"], /^judge: unknown option '--nope' \(run with --help for usage\)\n$/],
    ["an unknown command", ["acounts"], /^judge: unknown command 'acounts' \(Did you mean accounts\?\) \(run with --help for usage\)\n$/],
    ["a missing argument", ["accounts", "show"], /^judge: missing required argument '.+' \(run with --help for usage\)\n$/],
    ["a missing option value", ["--db"], /^judge: option '--db <path or url>' argument missing \(run with --help for usage\)\n$/],
  ])("%s", async (_name, args, pattern) => {
    expectOneLineUserError(await runJudge(args), pattern);
  });
});
