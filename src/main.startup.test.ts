import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tinyFixturePath } from "./testing/fixture.js";
import { cleanEnv, freePort } from "./testing/instances.js";

/**
 * Starting the service wrong, through every entry point as a user types it (`npm start`, which
 * is `node --import tsx src/main.ts`; `judge serve`; an administration command): one line on
 * stderr naming what to fix, exit code 1, never a stack trace, never a process left hanging. (A
 * model that cannot be loaded is main.model-unavailable.test.ts: it asserts on elapsed time.)
 */

const repoRoot = fileURLToPath(new URL("../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "judge-startup-"));
let model: string;

beforeAll(async () => {
  model = await tinyFixturePath();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  status: number | null;
  stderr: string;
}

const ENTRY_POINTS: Record<string, string[]> = {
  "npm start (node --import tsx src/main.ts)": ["--import", "tsx", "src/main.ts"],
  "judge serve": ["bin/judge.js", "serve"],
};

function run(args: string[], settings: Record<string, string>, timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: repoRoot, env: cleanEnv(settings), stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (status) => (clearTimeout(timer), resolve({ status, stderr })));
  });
}

function expectOneLine(result: Run, pattern: RegExp): void {
  const context = JSON.stringify(result);
  expect(result.status, context).toBe(1);
  expect(result.stderr.trim().split("\n"), context).toHaveLength(1);
  expect(result.stderr, context).toMatch(pattern);
  expect(result.stderr, `stack trace: ${context}`).not.toMatch(/\n\s+at /);
}

const settings = (extra: Record<string, string>) => ({
  JUDGE_DB: join(dir, `db-${Math.random().toString(36).slice(2)}.db`),
  JUDGE_MODEL: model,
  JUDGE_THREADS: "1",
  ...extra,
});

describe("a start that cannot succeed", () => {
  const BAD = { JUDGE_PORT: "eighty", JUDGE_SLOTS: "0" };
  const BOTH = /^judge: Invalid configuration: JUDGE_PORT: .*; JUDGE_SLOTS: .*$/m;

  for (const [name, args] of Object.entries(ENTRY_POINTS)) {
    it(`${name}: bad settings are one line naming each, exit code 1`, async () => {
      expectOneLine(await run(args, settings(BAD)), BOTH);
    });

    it(`${name}: a port in use is one line saying so, exit code 1`, async () => {
      const port = await freePort();
      const blocker: Server = createServer();
      await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve));
      try {
        const result = await run(args, settings({ JUDGE_HOST: "127.0.0.1", JUDGE_PORT: String(port) }));
        expectOneLine(result, new RegExp(`^judge: cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use by another process \\(set JUDGE_PORT\\)$`, "m"));
      } finally {
        blocker.close();
      }
    });
  }

  it("judge accounts list: bad settings are one line naming each, exit code 1", async () => {
    expectOneLine(await run(["bin/judge.js", "accounts", "list"], settings(BAD)), BOTH);
  });

  it("a calibration profile that cannot be read is one line naming it", async () => {
    const profile = join(dir, "missing-calibration.json");
    const result = await run(ENTRY_POINTS["judge serve"], settings({ JUDGE_PORT: "0", JUDGE_CALIBRATION: profile }));
    expectOneLine(result, new RegExp(`^judge: cannot use the calibration profile JUDGE_CALIBRATION=${profile}: .*no such file`, "m"));
  });

  it("a database that cannot be opened is one line naming it", async () => {
    const notADatabase = join(dir, "not-a-database.db");
    writeFileSync(notADatabase, "this is not SQLite ".repeat(100));
    const result = await run(ENTRY_POINTS["npm start (node --import tsx src/main.ts)"], settings({ JUDGE_PORT: "0", JUDGE_DB: notADatabase }));
    expectOneLine(result, /^judge: Cannot use database .*not-a-database\.db: file is not a database$/m);
  });
});
