import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

/**
 * The project type-checks (`npm run typecheck`). A test rather than a step before the suite, so
 * `tsc`'s 17 s run beside the system tests (mostly waiting on servers and processes) instead of
 * before everything; a type error still fails `npm test`, with tsc's own report as the message.
 */
const repoRoot = fileURLToPath(new URL("../", import.meta.url));
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

it("the whole project type-checks (tsc --noEmit over src/, scripts/ and the vitest config)", async () => {
  const run = await new Promise<{ code: number; output: string }>((resolve) =>
    execFile(
      process.execPath,
      [tsc, "--noEmit", "--pretty", "false"],
      { cwd: repoRoot, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
    ),
  );
  expect(run.code, run.output).toBe(0);
}, 600_000);
