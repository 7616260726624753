// @lane timed: asserts on elapsed time, so it runs after everything else, beside one other timed file at most (src/testing/test-kinds.ts).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tinyFixturePath } from "./testing/fixture.js";
import { cleanEnv, freePort } from "./testing/instances.js";

/**
 * A model that cannot be loaded does not stop the service from starting: it serves, /health says
 * why within seconds, and stderr says what to do (`judge serve` as a user types it). Apart from
 * main.startup.test.ts, whose other failed starts assert nothing about time.
 */

const repoRoot = fileURLToPath(new URL("../", import.meta.url));
const JUDGE_SERVE = ["bin/judge.js", "serve"];
const dir = mkdtempSync(join(tmpdir(), "judge-model-unavailable-"));
let model: string;

beforeAll(async () => {
  model = await tinyFixturePath();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const settings = (extra: Record<string, string>) => ({
  JUDGE_DB: join(dir, `db-${Math.random().toString(36).slice(2)}.db`),
  JUDGE_MODEL: model,
  JUDGE_THREADS: "1",
  ...extra,
});

describe("a model that cannot be loaded", () => {
  // A download host that refuses connections fails as a machine without internet does, at once.
  const offline = async () => `http://127.0.0.1:${await freePort()}/models/model.gguf`;
  const cases: [string, () => Promise<string>, RegExp][] = [
    ["a local file that does not exist", async () => join(dir, "no-such-model.gguf"), /no-such-model\.gguf does not exist/],
    ["a model to download with no network (offline first start)", offline, /cannot download .* cannot be reached/],
  ];
  it.each(cases)(
    "%s: serves anyway, /health is 503 failed with the reason within seconds, a plain hint says what to do, SIGTERM exits 0",
    async (_, model, reason) => {
      const missing = await model();
      const port = await freePort();
      const started = performance.now();
      const child = spawn(process.execPath, JUDGE_SERVE, {
        cwd: repoRoot,
        env: cleanEnv(settings({ JUDGE_HOST: "127.0.0.1", JUDGE_PORT: String(port), JUDGE_MODEL: missing, JUDGE_MODELS_DIR: join(dir, "models") })),
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      try {
        let health: { status: number; body: Record<string, unknown> } | undefined;
        for (let tries = 0; tries < 300 && health?.body.status !== "failed"; tries++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          const response = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
          if (response) health = { status: response.status, body: (await response.json()) as Record<string, unknown> };
        }
        expect(health?.status, stderr).toBe(503);
        expect(health?.body, stderr).toMatchObject({ code: "service_unavailable", status: "failed" });
        expect(String(health?.body.error), JSON.stringify(health)).toMatch(reason);
        expect(performance.now() - started, "failed within seconds").toBeLessThan(20_000);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(stderr, stderr).toMatch(/"message":"model unavailable"/);
        expect(stderr, stderr).toContain("Point JUDGE_MODEL at a local GGUF file");
        expect(stderr, stderr).toContain("npm run start:fixture");
      } finally {
        child.kill("SIGTERM");
      }
      expect(await exited, stderr).toBe(0);
    },
  );
});
