import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tinyFixturePath } from "./testing/fixture.js";

/**
 * The README's first answer in five commands, through real processes: `judge serve` on an empty database,
 * keys made with the CLI, an answer over HTTP, and a clean stop.
 */
const repoRoot = fileURLToPath(new URL("../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "judge-main-"));
let env: NodeJS.ProcessEnv;
let server: ChildProcess;
let stderr = "";
let baseUrl: string;

function judge(...args: string[]) {
  const result = spawnSync(process.execPath, ["bin/judge.js", "--json", ...args], { cwd: repoRoot, env, encoding: "utf8" });
  expect(result.status, `judge ${args.join(" ")}\n${result.stdout}\n${result.stderr}`).toBe(0);
  return JSON.parse(result.stdout);
}

function waitFor<T>(what: string, check: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const poll = () => {
      const value = check();
      if (value !== undefined) return resolve(value);
      if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${what}; stderr:\n${stderr}`));
      setTimeout(poll, 50);
    };
    poll();
  });
}

beforeAll(async () => {
  const others = Object.entries(process.env).filter(([name]) => !name.startsWith("JUDGE_"));
  env = { ...Object.fromEntries(others), JUDGE_DB: join(dir, "judge.db"), JUDGE_MODEL: await tinyFixturePath(), JUDGE_PORT: "0", JUDGE_THREADS: "1" };
  server = spawn(process.execPath, ["bin/judge.js", "serve"], { cwd: repoRoot, env });
  server.stderr!.on("data", (chunk) => (stderr += chunk));
  baseUrl = await waitFor("the listening line", () => {
    const line = stderr.split("\n").find((l) => l.includes('"message":"listening"'));
    return line ? (JSON.parse(line).url as string) : undefined;
  });
});

afterAll(() => {
  server?.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("serving from an empty database", () => {
  it("tells the operator how to create the first key", async () => {
    await waitFor("the first-key help", () => (stderr.includes("judge keys create --account") ? true : undefined));
    expect(stderr, stderr).toContain("No API keys exist yet");
    await waitFor("the first-question help", () => (stderr.includes("/v1/systemone -H") ? true : undefined));
    expect(stderr, stderr).toContain(`curl -s ${baseUrl}/v1/systemone`);
  });

  it("answers with a key created by the CLI once the model is ready", async () => {
    await waitFor("health 200", () => (stderr.includes('"message":"model ready"') ? true : undefined));
    const health = await fetch(`${baseUrl}/health`);
    expect(health.status, await health.clone().text()).toBe(200);

    const account = judge("accounts", "create", "--name", "New user");
    const { key } = judge("keys", "create", "--account", account.id);
    const response = await fetch(`${baseUrl}/v1/systemone`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ state: "I was charged twice.", questions: { angry: { type: "noul", instructions: "The customer is angry." } } }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    expect(JSON.parse(text).answers.angry.type, text).toBe("noul");
    expect(stderr, "a key reached the logs").not.toContain(key);
  });

  it("stops cleanly on SIGTERM", async () => {
    const exited = new Promise<number | null>((resolve) => server.once("exit", (code) => resolve(code)));
    server.kill("SIGTERM");
    expect(await exited, stderr).toBe(0);
  });
});
