import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { SETTING_NAMES, settingDefaults } from "../config/schema.js";
import { flagOf, FLAG_SETTINGS, overridesFromFlags } from "../config/help.js";
import { tinyFixturePath } from "../testing/fixture.js";
import { freePort } from "../testing/instances.js";
import { runJudge } from "./test-helpers.js";

/** `judge serve --host --port --model --db …`: flags beside the environment, mapped through config/help.ts. */

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "judge-serve-flags-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("judge serve's flags", () => {
  it("--help lists every setting with its flag and its default", async () => {
    const run = await runJudge(["serve", "--help"]);
    expect(run.status, run.stderr).toBe(0);
    const defaults = settingDefaults();
    for (const name of SETTING_NAMES) {
      const line = run.stdout.split("\n").find((l) => l.trim().startsWith(`${name} `));
      expect(line, `${name} in:\n${run.stdout}`).toBeDefined();
      expect(line, run.stdout).toContain(defaults[name] === "" ? "(unset)" : defaults[name]);
      if (FLAG_SETTINGS.includes(name)) expect(line, run.stdout).toContain(flagOf(name));
    }
    expect(run.stdout).toMatch(/JUDGE_ADMIN_TOKEN +\(environment only\)/);
    expect(run.stdout).toMatch(/JUDGE_SHUTDOWN_GRACE_MS +--shutdown-grace-ms +6000 /);
  });

  it("maps each flag to its JUDGE_* name; the secrets have none", () => {
    expect(overridesFromFlags({ host: "0.0.0.0", port: "9000", model: "m.gguf", engineUrl: "http://x", maxRequestTokens: "512" })).toEqual({
      JUDGE_HOST: "0.0.0.0",
      JUDGE_PORT: "9000",
      JUDGE_MODEL: "m.gguf",
      JUDGE_ENGINE_URL: "http://x",
      JUDGE_MAX_REQUEST_TOKENS: "512",
    });
    expect(FLAG_SETTINGS).not.toContain("JUDGE_ADMIN_TOKEN");
    expect(FLAG_SETTINGS).not.toContain("JUDGE_ENGINE_KEY");
  });

  it("serves with --host --port --model --db, a flag winning over its environment variable; a bad flag is one line", async () => {
    const port = await freePort();
    const model = await tinyFixturePath();
    const db = join(dir, "flags.db");
    const child = spawn(
      process.execPath,
      ["bin/judge.js", "serve", "--host", "127.0.0.1", "--port", String(port), "--model", model, "--db", db, "--log-level", "warn", "--threads", "1"],
      {
        cwd: repoRoot,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", JUDGE_PORT: "1", JUDGE_MODEL: "/nonexistent.gguf" },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      let health: { status: number; body: any } = { status: 0, body: undefined };
      for (let tries = 0; health.status !== 200; tries++) {
        if (tries > 600) throw new Error(`never healthy: ${JSON.stringify(health)}\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        health = await fetch(`http://127.0.0.1:${port}/health`).then(
          async (r) => ({ status: r.status, body: await r.json() }),
          () => health,
        );
      }
      expect(health.body.model, stderr).toBe(basename(model, ".gguf"));
      child.kill("SIGTERM");
      expect(await exited, stderr).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    const bad = await runJudge(["serve", "--port", "http"]);
    expect(bad.status, bad.stderr).toBe(1);
    expect(bad.stderr.trim().split("\n"), bad.stderr).toHaveLength(1);
    expect(bad.stderr, bad.stderr).toMatch(/^judge: Invalid configuration: JUDGE_PORT: /);
  });
});
