import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { tinyFixturePath } from "./testing/fixture.js";
import { cleanEnv, freePort } from "./testing/instances.js";

/**
 * SIGTERM to the process a user starts, through each wrapper as a user types it. npm forwards a
 * SIGTERM to the `sh -c` that runs a script or a package's bin, and that shell dies without
 * passing it on: the server went on as an orphan (its parent now init), holding its port, which
 * is what systemd, Docker and other supervisors would meet. Only the wrapper's pid is signalled,
 * never the group. Whatever the wrapper, the server must stop as on its own SIGTERM (its
 * "stopped" line), the port must be free and no process of the tree may be left; where the
 * wrapper's child is the server (the npm scripts), the wrapper exits with the server's status.
 */

const repoRoot = fileURLToPath(new URL("../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "judge-wrappers-"));
let model: string;
let group: number | undefined;

beforeAll(async () => {
  model = await tinyFixturePath();
});
afterEach(() => {
  // Whatever a failed test left: the whole group, which the test itself never signals.
  if (group) killGroup(group);
  group = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // Nothing left in it.
  }
}

/** The live processes of a process group, as "pid ppid command line" (zombies are gone already). */
function members(pgid: number): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // After the command name in parentheses: state, ppid, pgrp, …
      const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(pgrp) !== pgid || state === "Z") continue;
      found.push(`${pid} ${ppid} ${readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()}`);
    } catch {
      // It exited while being read.
    }
  }
  return found;
}

const health = (url: string) =>
  fetch(`${url}/health`).then(
    (response) => `answered ${response.status}`,
    (error: Error) => String(error.cause ?? error),
  );

async function until(what: string, done: () => Promise<boolean> | boolean, timeoutMs: number, context: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms\n${context()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface Stopped {
  /** The wrapper's exit: its status, or the signal that ended it. */
  exit: string;
  output: string;
}

/**
 * Starts `command args` in a group of its own, waits for a healthy server, then signals it: a
 * SIGTERM to the wrapper's pid alone (as a supervisor sends it), or Ctrl-C (a SIGINT to the whole
 * group, as a terminal sends it).
 */
async function startAndStop(command: string, args: string[], how: "SIGTERM" | "Ctrl-C" = "SIGTERM"): Promise<Stopped> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const settings = {
    JUDGE_MODEL: model,
    JUDGE_DB: join(dir, `${command}-${port}.db`),
    JUDGE_HOST: "127.0.0.1",
    JUDGE_PORT: String(port),
    JUDGE_THREADS: "1",
    JUDGE_LOG_LEVEL: "info",
    npm_config_update_notifier: "false",
  };
  const wrapper = spawn(command, args, { cwd: repoRoot, env: cleanEnv(settings), detached: true, stdio: ["ignore", "pipe", "pipe"] });
  group = wrapper.pid!;
  let output = "";
  wrapper.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  wrapper.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  let exit: string | undefined;
  wrapper.once("exit", (code, signal) => (exit = signal ?? `status ${code}`));
  // Every process of the tree holds the pipes: closed once the last one has exited.
  let closed = false;
  wrapper.once("close", () => (closed = true));
  const context = () => `wrapper: ${exit ?? "running"}\nprocesses:\n${members(group!).join("\n")}\noutput:\n${output}`;

  await until(
    "no healthy server",
    async () => {
      if (exit) throw new Error(`the wrapper exited before the server answered\n${context()}`);
      return (await health(url)) === "answered 200";
    },
    90_000,
    context,
  );
  const tree = members(group);
  expect(tree.length, context()).toBeGreaterThan(1);

  if (how === "SIGTERM") process.kill(wrapper.pid!, "SIGTERM");
  else process.kill(-group, "SIGINT");
  await until("the wrapper did not exit", () => exit !== undefined, 20_000, context);
  await until("processes of the tree were left", () => members(group!).length === 0, 20_000, context);
  await until("the output pipes were not closed", () => closed, 5_000, context);
  expect(await health(url), context()).toMatch(/ECONNREFUSED/);
  return { exit: exit!, output };
}

describe("a SIGTERM to the wrapper a user types stops the server", () => {
  it("npm start: the server stops, and npm exits with its status", async () => {
    const { exit, output } = await startAndStop("npm", ["start"]);
    expect(output).toMatch(/"message":"stopped"/);
    expect(exit, output).toBe("status 0");
  });

  it("npm run judge -- serve: the server stops, and npm exits with its status", async () => {
    const { exit, output } = await startAndStop("npm", ["run", "judge", "--", "serve"]);
    expect(output).toMatch(/"message":"stopped"/);
    expect(exit, output).toBe("status 0");
  });

  it("npx judge serve: the server stops as on its own SIGTERM, though npx exits at once", async () => {
    // npx's child is a shell that runs the bin and dies of the signal; npx then ends itself by
    // the same signal without waiting. The server sees its parent go and stops as signalled.
    const { output } = await startAndStop("npx", ["judge", "serve"]);
    expect(output).toMatch(/"message":"stopped"/);
  });
});

describe("Ctrl-C on the wrapper a user types stops the server once, gracefully", () => {
  // The server gets the terminal's SIGINT and then the wrapper's copy (npm passes it on; under
  // npx, bin/judge.js signals itself once the shell has died): one stop, not a forced exit 1.
  it.each([
    ["npm start", "npm", ["start"], "status 0"],
    ["npm run judge -- serve", "npm", ["run", "judge", "--", "serve"], "status 0"],
    ["npx judge serve", "npx", ["judge", "serve"], "SIGINT"],
  ])("%s", async (_name, command, args, wrapperExit) => {
    const { exit, output } = await startAndStop(command, args, "Ctrl-C");
    expect(output).toMatch(/"message":"stopped"/);
    expect(exit, output).toBe(wrapperExit);
  });
});
