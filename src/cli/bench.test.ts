// @lane timed: asserts on elapsed time, so it runs after everything else, beside one other timed file at most (src/testing/test-kinds.ts).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BenchReport } from "../bench/report.js";
import { tinyFixturePath } from "../testing/fixture.js";
import { addTestAccount, startTestServer, type TestServer } from "../testing/server.js";
import { runJudge } from "./test-helpers.js";

/** `judge …` in this process (runCli), beside the server it measures. */
const judge = (...args: string[]) => runJudge(args);

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

describe("judge bench against the real server on the tiny fixture model", () => {
  let server: TestServer;
  let dir: string;
  beforeAll(async () => {
    server = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), "judge-bench-"));
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("measures the asked requests per phase, with the ceiling, and its figures add up", async () => {
    const model = await tinyFixturePath();
    const run = await judge(
      "bench",
      "--url",
      server.url,
      "--key",
      server.key,
      "--json",
      "--model",
      model,
      "--threads",
      "1",
      "--state-tokens",
      "120",
      "--questions",
      "3",
      "--concurrency",
      "1,3",
      "--requests",
      "7",
      "--warmup",
      "1",
      "--ceiling-reads",
      "2",
    );
    expect(run.status, JSON.stringify(run)).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(server.key);
    const report = JSON.parse(run.stdout) as BenchReport;

    expect(report.model).toBe("tiny-seed1");
    expect(report.rateLimit, "the test plan's limit is far above the load").toMatchObject({ limit: 1_000_000, below: false });
    expect(run.stderr).toMatch(/rate limit: 1000000 requests per minute on this key, above the \d+ or more/);
    expect(run.stderr).not.toContain("WARNING");
    expect(report.state).toMatchObject({ targetTokens: 120, measuredBy: "tokenizer" });
    expect(report.phases.map((p) => [p.sameState, p.concurrency])).toEqual([
      [false, 1],
      [false, 3],
      [true, 1],
    ]);
    for (const phase of report.phases) {
      expect(phase, JSON.stringify(phase)).toMatchObject({ requests: 7, answered: 7, failed: 0, questions: 21, errors: {} });
      expect(close(phase.requestsPerSecond, phase.answered / phase.seconds)).toBe(true);
      expect(close(phase.questionsPerSecond, phase.questions / phase.seconds)).toBe(true);
      expect(close(phase.inputTokensPerSecond, phase.inputTokens / phase.seconds)).toBe(true);
      expect(close(phase.meanInputTokens!, phase.inputTokens / phase.answered)).toBe(true);
      expect(close(phase.ratioToCeiling!, phase.inputTokensPerSecond / phase.ceilingTokensPerSecond!)).toBe(true);
      const { p50, p95, p99, min, max } = phase.latencyMs!;
      expect(min <= p50 && p50 <= p95 && p95 <= p99 && p99 <= max).toBe(true);
      expect(max).toBeLessThanOrEqual(phase.seconds * 1000);
    }
    // Input tokens come from the server: the state is about 120 tokens, plus system text and questions.
    expect(report.phases[0].meanInputTokens).toBeGreaterThan(120);
    // 4 sampling points (before, between and after 3 phases) of 2 reads each.
    expect(report.ceiling).toMatchObject({ reads: 8, threads: 1, modelPath: model });
    expect(report.ceiling!.samples).toHaveLength(4);
    expect(report.ceiling!.tokensPerSecond).toBeGreaterThan(0);
    expect(Math.abs(report.ceiling!.tokensPerRead / report.phases[0].meanInputTokens! - 1)).toBeLessThan(0.2);
    expect(report.prefixReuse).toMatchObject({ concurrency: 1, sameStateP50Ms: report.phases[2].latencyMs!.p50 });
  });

  it("prints a table without a ceiling when no model file is given, reading the key from a file", async () => {
    const keyFile = join(dir, "key");
    writeFileSync(keyFile, `${server.key}\n`);
    const run = await judge("bench", "--url", server.url, "--key-file", keyFile, "--concurrency", "2", "--requests", "4", "--no-reuse", "--states", "3");
    expect(run.status, JSON.stringify(run)).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toMatch(/^STATE\s+CONC\s+REQUESTS/);
    expect(lines[1]).toMatch(/^new\s+2\s+4\s+0\s/);
    expect(lines[2]).toMatch(/^3 in turn\s+2\s+4\s+0\s/);
    expect(lines[3]).toBe("");
    expect(run.stdout).toMatch(/3 interleaved states \(concurrency 2\): p50 [\d.]+ ms vs [\d.]+ ms for new states;/);
    expect(run.stdout).toContain("measured by the server's usage counts");
    expect(run.stdout).toContain("no ceiling measured: pass --model");
  });

  it("stops with one line naming the server's refusal when the key is wrong", async () => {
    const run = await judge("bench", "--url", server.url, "--key", "tjs_wrong", "--requests", "2");
    expect(run.status, JSON.stringify(run)).toBe(1);
    expect(run.stderr).toMatch(/judge: the server at http:\/\/127\.0\.0\.1:\d+ answered 401 \(invalid_api_key\)\n$/);
  });
});

describe("judge bench against a key whose plan allows 5 requests per minute", () => {
  let limited: TestServer;
  /** A new account per test: each gets a limit of its own. */
  const limitedKey = async () => (await addTestAccount(limited.services, { plan: { requestsPerMinute: 5 } })).key;
  const systemOneRequests = () => limited.logLines.map((line) => JSON.parse(line)).filter((l) => l.message === "request" && l.path === "/v1/systemone").length;
  beforeAll(async () => {
    limited = await startTestServer({ plan: { requestsPerMinute: 5 } });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it("stops after the first request, naming the limit and the way out, when the run would send more in a minute", async () => {
    const before = systemOneRequests();
    // 3 probes (the first, and the calibration with and without the state), 1 warm-up and 4 measured: 8 requests, more than 5.
    const run = await judge("bench", "--url", limited.url, "--key", await limitedKey(), "--concurrency", "1", "--requests", "4", "--no-reuse");
    expect(run.status, JSON.stringify(run)).toBe(1);
    expect(run.stdout, JSON.stringify(run)).toBe("");
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines.at(-1), JSON.stringify(run)).toMatch(
      /^judge: this key's plan allows 5 requests per minute and this run would send at least 8 in a minute: .* \(e\.g\. judge plans create --name bench --rpm 1000000 .* or pass --allow-rate-limit to measure anyway$/,
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(systemOneRequests() - before, "only the first request was sent").toBe(1);
  });

  it("goes on with --allow-rate-limit, warning, and counts the 429s in the table's own column", async () => {
    const run = await judge(
      "bench",
      "--url",
      limited.url,
      "--key",
      await limitedKey(),
      "--allow-rate-limit",
      "--concurrency",
      "1",
      "--duration",
      "1500ms",
      "--warmup",
      "0",
      "--no-reuse",
      "--state-tokens",
      "40",
    );
    expect(run.status, JSON.stringify(run)).toBe(0);
    expect(run.stderr).toMatch(
      /\nWARNING: this key's plan allows 5 requests per minute and this run would send at least \d+ in a minute: .*--allow-rate-limit/,
    );
    const lines = run.stdout.split("\n");
    expect(lines[0], run.stdout).toMatch(/^STATE\s+CONC\s+REQUESTS\s+FAILED\s+429\s+REQ\/S/);
    const [state, concurrency, requests, failed, rateLimited] = lines[1].split(/\s{2,}/);
    expect([state, concurrency], run.stdout).toEqual(["new", "1"]);
    expect(Number(failed), run.stdout).toBeGreaterThan(0);
    expect(rateLimited, run.stdout).toBe(failed);
    expect(Number(requests)).toBeGreaterThan(Number(failed));
    expect(run.stdout).toContain("WARNING: rate limit of 5 requests per minute on this key, below the");
  });

  it("counts 429s as failures, out of the latencies, and waits no longer than the phase for Retry-After", async () => {
    const started = performance.now();
    const run = await judge(
      "bench",
      "--url",
      limited.url,
      "--key",
      await limitedKey(),
      "--json",
      "--allow-rate-limit",
      "--concurrency",
      "1",
      "--duration",
      "1500ms",
      "--warmup",
      "0",
      "--no-reuse",
      "--state-tokens",
      "40",
    );
    expect(run.status, JSON.stringify(run)).toBe(0);
    const report = JSON.parse(run.stdout) as BenchReport;
    expect(report.rateLimit, run.stdout).toMatchObject({ limit: 5, below: true });
    const [phase] = report.phases;
    expect(phase.failed, JSON.stringify(phase)).toBeGreaterThan(0);
    expect(Object.keys(phase.errors)).toEqual(["429"]);
    expect(phase.failures).toEqual({ "429": phase.failed, "4xx": 0, "5xx": 0, network: 0, other: 0 });
    expect(phase.answered + phase.failed).toBe(phase.requests);
    expect(phase.latencyMs?.p50 ?? null).toEqual(phase.answered > 0 ? expect.any(Number) : null);
    // A per-minute limit asks for up to 60 s; the phase still ends on time.
    expect(phase.seconds).toBeLessThan(5);
    expect(performance.now() - started).toBeLessThan(30_000);
  });
});
