import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect } from "vitest";
import { newTestDatabase, type StoreEngine, type TestDatabase } from "../testing/databases.js";
import type { OutputStream } from "./context.js";
import { runCli } from "./program.js";

/**
 * Shared by the CLI's tests: every test gets a fresh, migrated database (a SQLite file in a temp
 * dir unless the harness is for PostgreSQL, then a schema of its own), dropped afterwards.
 * Commands run in this process through runCli, with their own buffers for streams and their own
 * environment; a test that is about the process itself spawns bin/judge.js with runInRepo.
 */

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
// The CLI reads JUDGE_* variables; the test's own environment must not steer it.
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("JUDGE_")));

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface CliHarness {
  /** The current test's database: `location` is the SQLite file (or the PostgreSQL URL). */
  database(): TestDatabase;
  /** Runs a `judge …` command line against the test's database. */
  judge(...args: string[]): Promise<Run>;
  /** Runs and requires success, printing the whole run on failure. */
  judgeOk(...args: string[]): Promise<string>;
  judgeJson<T>(...args: string[]): Promise<T>;
}

/** Call at the top of a test file: registers the hooks that create and drop each test's database. */
export function useCliHarness(engine: StoreEngine = "sqlite"): CliHarness {
  let current: TestDatabase | undefined;
  beforeEach(async () => {
    current = newTestDatabase(engine);
    // Administration commands refuse a database that does not exist yet; a deployment's would
    // have been created by its server's first start.
    await (await current.store()).close();
  });
  afterEach(async () => {
    await current?.drop();
    current = undefined;
  });

  const database = () => {
    if (!current) throw new Error("the CLI harness has no database outside a test");
    return current;
  };
  // The schema travels in the environment, as it would in a deployment (there is no --schema flag).
  const judge = (...args: string[]) => {
    const { location, schema } = database();
    return runJudge([...args, "--db", location], schema === undefined ? {} : { JUDGE_DB_SCHEMA: schema });
  };
  const judgeOk = async (...args: string[]): Promise<string> => {
    const run = await judge(...args);
    expect(run.status, `judge ${args.join(" ")}: ${JSON.stringify(run)}`).toBe(0);
    return run.stdout;
  };
  const judgeJson = async <T>(...args: string[]): Promise<T> => {
    const stdout = await judgeOk(...args, "--json");
    try {
      return JSON.parse(stdout) as T;
    } catch {
      throw new Error(`judge ${args.join(" ")} --json printed non-JSON:\n${stdout}`);
    }
  };
  return { database, judge, judgeOk, judgeJson };
}

/** `judge` with `args` in this process, in an environment without the machine's JUDGE_* settings. */
export async function runJudge(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const stdout = buffer();
  const stderr = buffer();
  const status = await runCli(args, { stdout, stderr, env: { ...cleanEnv, ...env } });
  return { status, stdout: stdout.text, stderr: stderr.text };
}

function buffer(): OutputStream & { text: string } {
  return {
    text: "",
    write(text: string) {
      this.text += text;
      return true;
    },
  };
}

/** A command run in the repository without the machine's JUDGE_* settings, its output collected. */
export function runInRepo(command: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: repoRoot,
      env: { ...cleanEnv, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** Exit code 1 and exactly one `judge: …` line on stderr, without a stack trace. */
export function expectOneLineUserError(run: Run, pattern: RegExp): void {
  const context = JSON.stringify(run);
  expect(run.status, context).toBe(1);
  expect(run.stderr.trim().split("\n"), context).toHaveLength(1);
  expect(run.stderr, context).toMatch(pattern);
  expect(run.stderr, `stack trace on stderr: ${context}`).not.toMatch(/\n\s+at /);
}
