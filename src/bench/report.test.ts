import { describe, expect, it } from "vitest";
import { formatReport } from "./format-report.js";
import type { LoadResult } from "./load.js";
import { buildReport, NO_CEILING_NOTE, type ReportInput } from "./report.js";

const load = (overrides: Partial<LoadResult>): LoadResult => ({
  sent: 10,
  answered: 10,
  questions: 30,
  inputTokens: 5000,
  latenciesMs: [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000],
  errors: {},
  errorSamples: [],
  elapsedMs: 4000,
  clientCpuMs: 40,
  model: "m",
  maxInFlight: 1,
  ...overrides,
});

const settings: ReportInput["settings"] = {
  url: "http://x",
  shape: { stateTokens: 300, questions: 3, options: 4 },
  concurrency: [1, 4],
  limit: { requests: 10 },
  seed: 1,
  modelPath: "/models/m.gguf",
  ceilingReads: 2,
  reuse: true,
};

const input: ReportInput = {
  settings,
  model: "m",
  calibration: { tokensPerWord: 1.5, by: "tokenizer", words: 200 },
  phases: [
    { spec: { concurrency: 1, sameState: false }, result: load({}) },
    {
      spec: { concurrency: 4, sameState: false },
      result: load({ sent: 12, answered: 10, errors: { "429": 2 }, errorSamples: ["429: rate_limited"], elapsedMs: 2000 }),
    },
    { spec: { concurrency: 1, sameState: true }, result: load({ elapsedMs: 1000, latenciesMs: [50, 60, 70, 80, 90, 100, 110, 120, 130, 140] }) },
  ],
  // 500 tokens per read: 1 s reads 500 tokens/s, 0.5 s reads 1000 tokens/s.
  ceiling: {
    modelPath: "/models/m.gguf",
    threads: 2,
    tokensPerRead: 500,
    samples: [
      [1, 1],
      [0.5, 0.5],
      [1, 0.5],
      [0.25, 0.25],
    ],
  },
};

describe("the bench report", () => {
  const report = buildReport(input);

  it("derives each phase's rates from its counts and wall-clock seconds", () => {
    const [first, second] = report.phases;
    expect(first).toMatchObject({
      requests: 10,
      answered: 10,
      failed: 0,
      seconds: 4,
      requestsPerSecond: 2.5,
      questionsPerSecond: 7.5,
      inputTokensPerSecond: 1250,
      meanInputTokens: 500,
      clientCpuMsPerRequest: 4,
      clientCpuShare: 0.01,
    });
    expect(first.latencyMs).toMatchObject({ p50: 500, p95: 1000, p99: 1000, mean: 550 });
    // Failures count as requests sent, not as answered, and stay out of every rate.
    expect(second).toMatchObject({ requests: 12, answered: 10, failed: 2, errors: { "429": 2 }, requestsPerSecond: 5, inputTokensPerSecond: 2500 });
  });

  it("compares each phase with the ceiling reads taken just before and after it", () => {
    // Phase 1: reads at 500, 500 (before) and 1000, 1000 (after): median 750 tokens/s.
    expect(report.phases[0].ceilingTokensPerSecond).toBe(750);
    expect(report.phases[0].ratioToCeiling).toBeCloseTo(1250 / 750, 12);
    // Phase 2: 1000, 1000 and 500, 1000: median 1000.
    expect(report.phases[1].ceilingTokensPerSecond).toBe(1000);
    expect(report.phases[1].ratioToCeiling).toBe(2.5);
    // Phase 3: 500, 1000 and 2000, 2000: median 1500.
    expect(report.phases[2].ceilingTokensPerSecond).toBe(1500);
    expect(report.ceiling).toMatchObject({ tokensPerRead: 500, reads: 8, tokensPerSecond: 1000, threads: 2 });
    expect(report.ceiling!.samples).toEqual([
      [500, 500],
      [1000, 1000],
      [500, 1000],
      [2000, 2000],
    ]);
    expect(report.ceilingNote).toBeNull();
  });

  it("states what repeating the state saves against new states at the same concurrency", () => {
    expect(report.prefixReuse).toMatchObject({ concurrency: 1, newStateP50Ms: 500, sameStateP50Ms: 90, requestsPerSecondGain: 4 });
    expect(report.prefixReuse!.latencySaving).toBeCloseTo(1 - 90 / 500, 12);
  });

  it("compares K interleaved states with new and repeated states at the same concurrency", () => {
    const withStates = buildReport({
      ...input,
      settings: { ...settings, states: 4 },
      phases: [
        ...input.phases,
        {
          spec: { concurrency: 1, sameState: false, states: 4 },
          result: load({ elapsedMs: 2000, latenciesMs: [100, 110, 120, 130, 140, 150, 160, 170, 180, 190] }),
        },
      ],
    });
    expect(withStates.settings.states).toBe(4);
    expect(withStates.prefixReuse, "the repeated-state comparison ignores the interleaved phase").toEqual(report.prefixReuse);
    expect(withStates.interleaved).toMatchObject({
      states: 4,
      concurrency: 1,
      p50Ms: 140,
      newStateP50Ms: 500,
      sameStateP50Ms: 90,
      requestsPerSecond: 5,
      requestsPerSecondGainOverNew: 2,
    });
    expect(withStates.interleaved!.latencySavingOverNew).toBeCloseTo(1 - 140 / 500, 12);
    const text = formatReport(withStates);
    expect(
      text
        .split("\n")[4]
        .split(/\s{2,}/)
        .slice(0, 3),
    ).toEqual(["4 in turn", "1", "10"]);
    expect(text).toContain(
      "4 interleaved states (concurrency 1): p50 140 ms vs 500 ms for new states, 90.0 ms for one repeated state; 2.00× the requests/s of new states",
    );
    expect(report.interleaved, "no interleaved phase, no comparison").toBeNull();
  });

  it("warns when the ceiling's model file is not named like the server's model", () => {
    expect(buildReport({ ...input, model: "qwen" }).ceilingNote).toBe(
      'the server answers as "qwen" but the ceiling read m.gguf: make sure it is the same model',
    );
    expect(formatReport(buildReport({ ...input, model: "qwen" }))).toContain("\nwarning: the server answers as");
  });

  it("rounds before choosing how many decimals to print", () => {
    const rounding = buildReport({
      ...input,
      phases: [{ spec: { concurrency: 1, sameState: false }, result: load({ answered: 9999, sent: 9999, elapsedMs: 100_000, latenciesMs: [99.97] }) }],
    });
    expect(
      formatReport(rounding)
        .split("\n")[1]
        .split(/\s{2,}/)
        .slice(4, 9),
    ).toEqual(["100", "0.30", "50.0", "0.07", "100"]);
  });

  it("says why there is no ceiling when no model file was given", () => {
    const without = buildReport({ ...input, ceiling: undefined, settings: { ...settings, modelPath: undefined } });
    expect(without.ceiling).toBeNull();
    expect(without.ceilingNote).toBe(NO_CEILING_NOTE);
    expect(without.phases.every((p) => p.ratioToCeiling === null)).toBe(true);
    expect(formatReport(without)).toContain("no ceiling measured: pass --model");
  });

  it("prints one row per phase with the same figures, and the failures in their own columns", () => {
    const text = formatReport(report);
    const rows = text.split("\n");
    expect(rows[0]).toMatch(/^STATE\s+CONC\s+REQUESTS\s+FAILED\s+429\s+REQ\/S\s+QUESTIONS\/S\s+INPUT TOK\/S\s+× CEILING\s+P50 MS\s+P95 MS\s+P99 MS$/);
    expect(rows[1].split(/\s{2,}/)).toEqual(["new", "1", "10", "0", "0", "2.50", "7.50", "1250", "1.67", "500", "1000", "1000"]);
    expect(rows[2].split(/\s{2,}/)).toEqual(["new", "4", "12", "2", "2", "5.00", "15.0", "2500", "2.50", "500", "1000", "1000"]);
    expect(rows[3].split(/\s{2,}/)).toEqual(["same", "1", "10", "0", "0", "10.0", "30.0", "5000", "3.33", "90.0", "140", "140"]);
    expect(text).toContain("ceiling: 1000 tokens/s");
    expect(text).toContain("prefix reuse (concurrency 1): p50 90.0 ms when the state repeats vs 500 ms when it is new: 82% less, 4.00× the requests/s");
    expect(text).toContain("failed (new state, concurrency 4): 429×2; 429: rate_limited");
    expect(text, "no rate-limit check, no warning").not.toContain("WARNING");
  });

  it("sorts failures into 429, other 4xx, 5xx, network and other, in the JSON and as columns of the kinds that happened", () => {
    const errors = { "429": 3, "404": 1, "413": 2, "502": 4, "503": 1, network: 5, "bad-200": 1, "301": 1 };
    const failing = buildReport({
      ...input,
      phases: [
        { spec: { concurrency: 1, sameState: false }, result: load({}) },
        { spec: { concurrency: 2, sameState: false }, result: load({ sent: 28, answered: 10, errors }) },
      ],
    });
    expect(failing.phases[0].failures).toEqual({ "429": 0, "4xx": 0, "5xx": 0, network: 0, other: 0 });
    expect(failing.phases[1].failures).toEqual({ "429": 3, "4xx": 3, "5xx": 5, network: 5, other: 2 });
    const rows = formatReport(failing)
      .split("\n")
      .map((row) => row.split(/\s{2,}/));
    expect(rows[0].slice(0, 10)).toEqual(["STATE", "CONC", "REQUESTS", "FAILED", "429", "4XX", "5XX", "NETWORK", "OTHER", "REQ/S"]);
    expect(rows[1].slice(2, 9)).toEqual(["10", "0", "0", "0", "0", "0", "0"]);
    expect(rows[2].slice(2, 9)).toEqual(["28", "18", "3", "3", "5", "5", "2"]);
    const server = buildReport({
      ...input,
      phases: [{ spec: { concurrency: 1, sameState: false }, result: load({ sent: 11, errors: { "500": 1 } }) }],
    });
    expect(formatReport(server).split("\n")[0]).toMatch(/^STATE\s+CONC\s+REQUESTS\s+FAILED\s+5XX\s+REQ\/S/);
  });

  it("keeps the rate-limit check in the JSON and warns above the table's notes when the limit was below the load", () => {
    const below = { limit: 5, remaining: 4, offeredPerMinute: 38, below: true };
    const limited = buildReport({ ...input, rateLimit: below });
    expect(limited.rateLimit).toEqual(below);
    expect(formatReport(limited).split("\n")[5]).toBe(
      "WARNING: rate limit of 5 requests per minute on this key, below the 38 or more this run sends in a minute: " +
        "these figures measure the limit as much as the server",
    );
    const above = buildReport({ ...input, rateLimit: { ...below, limit: 1000, below: false } });
    expect(above.rateLimit).toMatchObject({ limit: 1000, below: false });
    expect(formatReport(above)).not.toContain("WARNING");
    expect(report.rateLimit, "a server without the headers").toBeNull();
  });
});
