import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replyTo, startFakeJudgeServer } from "../testing/fake-judge-server.js";
import { temperaturesFor } from "../judgment/calibration.js";
import { loadCalibrationFile } from "../services/calibration-file.js";
import { startTestServer, type TestServer } from "../testing/server.js";
import { bindIo, CliError } from "./context.js";
import { registerEvaluationCommands } from "./evaluation.js";
import { runJudge } from "./test-helpers.js";

/**
 * `judge eval` and `judge calibrate` end to end against the real server on the tiny fixture
 * model. Its answers mean nothing, so these tests check machinery: every answer is accounted
 * for, the outputs agree with each other, and the profile written is one the server loads.
 */

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const sample = join(repoRoot, "examples/eval-sample.jsonl");
const sampleItems = readFileSync(sample, "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line));
const questionCount = sampleItems.reduce((sum, item) => sum + Object.keys(item.questions).length, 0);
const show = (value: unknown) => JSON.stringify(value, null, 1).slice(0, 4000);

let server: TestServer;
let dir: string;
let keyFile: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "judge-eval-"));
  server = await startTestServer();
  keyFile = join(dir, "key.txt");
  writeFileSync(keyFile, `${server.key}\n`);
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the two commands alone through commander, capturing stdout and stderr; a failure rejects with its error. */
async function judge(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  const output = { stdout: "", stderr: "" };
  const stdout = { write: (text: string) => (output.stdout += text) };
  const stderr = { write: (text: string) => (output.stderr += text) };
  const program = new Command("judge").option("--json").exitOverride().configureOutput({ writeOut: stdout.write, writeErr: stderr.write });
  bindIo(program, { stdout, stderr });
  registerEvaluationCommands(program);
  await program.parseAsync(args, { from: "user" });
  return output;
}

describe("judge eval against the real server", () => {
  it("scores every answer, runs every check, and writes a consistent summary, report, diagram and predictions", async () => {
    const out = join(dir, "report");
    const run = await judge(
      "eval",
      sample,
      "--url",
      server.url,
      "--key-file",
      keyFile,
      "--out",
      out,
      "--json",
      "--option-order",
      "shuffle",
      "--question-ids",
      "--interference",
      "--concurrency",
      "3",
    );
    const summary = JSON.parse(run.stdout);
    const context = show({ summary, stderr: run.stderr });

    expect(run.stderr, context).toMatch(/eval: \d+\/\d+ requests \(100%\)/);
    expect(summary.models, context).toEqual([server.engine.modelId]);
    expect(summary.items).toBe(sampleItems.length);
    const { overall, ...byType } = summary.metrics;
    expect(overall.answers, context).toBe(questionCount);
    expect(
      Object.values<any>(byType).reduce((sum, m) => sum + m.answers, 0),
      context,
    ).toBe(questionCount);
    expect(overall.bins.reduce((sum: number, b: any) => sum + b.count, 0)).toBe(questionCount);
    expect(overall.coverage.map((c: any) => c.maxErrorRate)).toEqual([0.01, 0.05, 0.1]);

    const predictions = readFileSync(join(out, "predictions.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(predictions).toHaveLength(questionCount);
    for (const p of predictions)
      expect(
        p.probabilities.reduce((a: number, b: number) => a + b, 0),
        show(p),
      ).toBeCloseTo(1, 9);
    // Recomputed from the per-answer file with plain formulas: the summary must agree.
    const argmax = (xs: number[]) => xs.indexOf(Math.max(...xs));
    // Right: the top label (a tie goes to the first) is a most likely gold label (docs/evaluation/eval.md, "Accuracy").
    const accuracy = predictions.filter((p) => p.gold[argmax(p.probabilities)] === Math.max(...p.gold)).length / questionCount;
    const nll =
      predictions.reduce(
        (sum, p) => sum - p.gold.reduce((s: number, g: number, k: number) => s + (g ? g * Math.log(Math.max(p.probabilities[k], 1e-15)) : 0), 0),
        0,
      ) / questionCount;
    expect(overall.accuracy, context).toBeCloseTo(accuracy, 12);
    expect(overall.nll, context).toBeCloseTo(nll, 12);

    // This server never shows ids to the model and isolates questions exactly (docs/concepts/answers.md).
    const { optionOrder, questionIds, interference } = summary.robustness;
    expect(optionOrder.mode).toBe("shuffle");
    expect(optionOrder.overall.compared, context).toBe(
      sampleItems.reduce((n, i) => n + Object.values<any>(i.questions).filter((q) => q.type === "choice").length, 0),
    );
    expect(questionIds.overall, context).toMatchObject({ compared: questionCount, changedRate: 0 });
    expect(questionIds.overall.maxAbsChange, context).toBeLessThan(1e-9);
    expect(interference.overall.maxAbsChange, context).toBeLessThan(1e-9);
    const multi = sampleItems.filter((i) => Object.keys(i.questions).length > 1);
    expect(summary.usage.requests, context).toBe(3 * sampleItems.length + multi.reduce((n, i) => n + Object.keys(i.questions).length, 0));

    expect(JSON.parse(readFileSync(join(out, "summary.json"), "utf8"))).toEqual(summary);
    const html = readFileSync(join(out, "report.html"), "utf8");
    expect(html.match(/<svg /g)?.length, "a diagram overall and per type").toBe(1 + Object.keys(byType).length);
    expect(html, "tables, not preformatted text").not.toContain("<pre");
    expect(html.match(/<table id="(metrics|coverage|robustness|confusion-\d+)">/g)?.length, html.slice(0, 3000)).toBeGreaterThanOrEqual(4);
    const { tables, omitted } = summary.confusion;
    expect(tables.reduce((n: number, t: any) => n + t.answers, 0) + omitted.answers, context).toBe(byType.choice.answers);
    expect(readFileSync(join(out, "reliability.svg"), "utf8")).toMatch(/^<svg [^>]*>[\s\S]*<\/svg>\n$/);
  });

  it("with --debias canonical no shuffle of the options moves an answer; with --debias shift no cyclic shift does", async () => {
    const choices = sampleItems.reduce((n, i) => n + Object.values<any>(i.questions).filter((q) => q.type === "choice").length, 0);
    const evalJson = async (...args: string[]) =>
      JSON.parse((await judge("eval", sample, "--url", server.url, "--key", server.key, "--json", "--seed", "5", ...args)).stdout);
    // The tiny model is strongly position-biased: without debiasing the check sees it.
    const plain = await evalJson("--out", join(dir, "order-plain"), "--option-order", "shift");
    expect(plain.robustness.optionOrder.overall.changedRate, show(plain.robustness)).toBeGreaterThan(0);
    expect(plain, show(plain)).not.toHaveProperty("debias");

    for (const [debias, order] of [
      ["canonical", "shuffle"],
      ["shift", "shift"],
    ]) {
      const summary = await evalJson("--out", join(dir, `order-${debias}`), "--option-order", order, "--debias", debias);
      const context = show({ debias, order, robustness: summary.robustness, usage: summary.usage });
      expect(summary.debias, context).toBe(debias);
      expect(summary.robustness.optionOrder, context).toMatchObject({ mode: order, overall: { compared: choices, changedRate: 0, maxAbsChange: 0 } });
      expect(summary.usage.input_tokens, `${debias} reads more than one presentation per choice\n${context}`).toBeGreaterThan(
        debias === "shift" ? plain.usage.input_tokens : 0,
      );
      const html = readFileSync(join(dir, `order-${debias}`, "report.html"), "utf8");
      expect(html, html.slice(0, 2000)).toContain(`x_debias <code>${debias}</code>`);
    }
  });

  it("prints a table for people without --json", async () => {
    const run = await judge("eval", sample, "--url", server.url, "--key", server.key, "--out", join(dir, "text"), "--error-rate", "0.2");
    expect(run.stdout, run.stdout).toMatch(/^Evaluated 15 items \(\d+ answers\)/);
    expect(run.stdout, run.stdout).toMatch(/TYPE\s+ANSWERS\s+ACCURACY\s+BRIER\s+NLL\s+ECE\s+COVERAGE ERR≤20%\s+LEVEL MAE\noverall/);
  });

  it("names the item and line when the server refuses one", async () => {
    const bad = join(dir, "bad.jsonl");
    writeFileSync(
      bad,
      `${JSON.stringify(sampleItems[0])}\n${JSON.stringify({ id: "odd", questions: { q: { type: "noul", instructions: 5 } }, gold: { q: true } })}\n`,
    );
    const error = await judge("eval", bad, "--url", server.url, "--key", server.key, "--out", join(dir, "bad")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect((error as Error).message).toMatch(/^item odd \(line 2\): .* answered 400 invalid_request: .*instructions/);
  });

  it("asks for a key, and refuses two", async () => {
    await expect(judge("eval", sample, "--url", server.url)).rejects.toThrow(/--key <key> or --key-file <file>/);
    await expect(judge("eval", sample, "--url", server.url, "--key", "k", "--key-file", keyFile)).rejects.toThrow(/either --key or --key-file/);
  });
});

describe("judge calibrate against the real server", () => {
  it("fits on raw logits, reports before and after on held-out items, and merges its model into the profile", async () => {
    const profile = join(dir, "profile.json");
    writeFileSync(profile, JSON.stringify({ version: 1, models: { "other-model": { choice: 2, noul: 0.5 } } }));
    const out = join(dir, "calibrated");
    const run = await judge(
      "calibrate",
      sample,
      "--url",
      server.url,
      "--key-file",
      keyFile,
      "--profile",
      profile,
      "--out",
      out,
      "--holdout",
      "0.4",
      "--min-bucket",
      "3",
      "--json",
    );
    const result = JSON.parse(run.stdout);
    const context = show({ result, stderr: run.stderr });

    expect(result.model).toBe(server.engine.modelId);
    expect(result.logitsSource, context).toBe("logits");
    expect(result.notes).toEqual([]);
    expect(result.split.fitItems + result.split.heldOutItems).toBe(sampleItems.length);
    expect(result.split.heldOutItems).toBe(6);
    expect(result.split.fitAnswers + result.split.heldOutAnswers).toBe(questionCount);
    expect(result.heldOut.uncalibrated.overall.answers).toBe(result.split.heldOutAnswers);
    for (const fit of Object.values<any>(result.fit.types)) expect(fit.nllAfter, context).toBeLessThanOrEqual(fit.nllBefore);

    const written = await loadCalibrationFile(profile);
    expect(written.models["other-model"], "other models are kept").toEqual({ choice: 2, noul: 0.5, score: 1 });
    const temperatures = temperaturesFor(written, result.model);
    for (const type of ["choice", "noul", "score"] as const) expect(temperatures[type], context).toBeCloseTo(result.temperatures[type], 4);
    expect(written.version, context).toBe(result.temperatures.buckets ? 2 : 1);

    expect(result.files, context).toEqual({ report: join(out, "report.html"), diagram: join(out, "reliability.svg") });
    const html = readFileSync(result.files.report, "utf8");
    expect(html.match(/<table id="(temperatures|held-out)">/g), html.slice(0, 3000)).toHaveLength(2);
    const groups = Object.keys(result.heldOut.uncalibrated).length;
    expect(html.match(/<svg /g)?.length, "a before/after diagram overall and per type").toBe(groups);
    expect(readFileSync(result.files.diagram, "utf8")).toMatch(/^<svg [^>]*>[\s\S]*uncalibrated · ECE[\s\S]*calibrated · ECE[\s\S]*<\/svg>\n$/);
  });

  it("with --debias canonical the profile does not depend on the order the dataset lists options in; without it, it does", async () => {
    const reversed = join(dir, "reversed.jsonl");
    const reverseOptions = (q: any) => (q.type === "choice" ? { ...q, criteria: Object.fromEntries(Object.entries(q.criteria).reverse()) } : q);
    const reversedItems = sampleItems.map((item) => ({
      ...item,
      questions: Object.fromEntries(Object.entries<any>(item.questions).map(([id, q]) => [id, reverseOptions(q)])),
    }));
    writeFileSync(reversed, reversedItems.map((item) => JSON.stringify(item)).join("\n") + "\n");
    const fit = async (dataset: string, name: string, ...extra: string[]) => {
      const args = ["calibrate", dataset, "--url", server.url, "--key", server.key, "--profile", join(dir, `${name}.json`), "--out", join(dir, name)];
      return JSON.parse((await judge(...args, "--holdout", "0", "--min-bucket", "3", "--dry-run", "--json", ...extra)).stdout);
    };

    const [plain, plainReversed] = [await fit(sample, "plain"), await fit(reversed, "plain-reversed")];
    expect(plain, show(plain)).not.toHaveProperty("debias");
    // The tiny model is strongly position-biased, so the logits it is fitted on move with the order.
    expect(plainReversed.temperatures, show({ plain: plain.temperatures, plainReversed: plainReversed.temperatures })).not.toEqual(plain.temperatures);

    const [canonical, canonicalReversed] = [
      await fit(sample, "canonical", "--debias", "canonical"),
      await fit(reversed, "canonical-reversed", "--debias", "canonical"),
    ];
    const context = show({ canonical, canonicalReversed });
    expect([canonical.debias, canonicalReversed.debias], context).toEqual(["canonical", "canonical"]);
    expect(canonicalReversed.temperatures, context).toEqual(canonical.temperatures);
    // The metrics sum each answer's probabilities in the dataset's order: equal to the last bits.
    const rounded = (value: unknown) => JSON.parse(JSON.stringify(value, (_, v) => (typeof v === "number" ? Number(v.toPrecision(12)) : v)));
    expect(rounded(canonicalReversed.heldOut), context).toEqual(rounded(canonical.heldOut));
    expect(readFileSync(join(dir, "canonical", "report.html"), "utf8")).toContain("x_debias <code>canonical</code>");
  });

  it("falls back to log(probabilities) when a server sends no logits, says so, and --dry-run writes nothing", async () => {
    const other = await startFakeJudgeServer((body) => replyTo(body, "other-server"));
    try {
      const profile = join(dir, "never.json");
      const out = join(dir, "dry");
      const run = await judge("calibrate", sample, "--url", other.url, "--key", "k", "--profile", profile, "--out", out, "--dry-run", "--json");
      const result = JSON.parse(run.stdout);
      expect(result.logitsSource).toBe("probabilities");
      expect(result.notes[0]).toMatch(/sent no logits.*log\(probabilities\)/);
      expect(run.stderr).toMatch(/calibrate: The server sent no logits/);
      expect(
        other.received.every((r) => r.body.include_logits === true),
        "calibrate asks for logits",
      ).toBe(true);
      expect(existsSync(profile)).toBe(false);
      expect(readFileSync(join(out, "report.html"), "utf8"), "the report is written all the same").toMatch(/Not written \(<code>--dry-run<\/code>\)/);
    } finally {
      await other.close();
    }
  });
});

describe("judge calibrate --folds against the real server", () => {
  it("scores every answer once, out of fold, writes the fit on all items, and names the folds in text and report", async () => {
    const profile = join(dir, "folds.json");
    const out = join(dir, "folds");
    const args = ["calibrate", sample, "--url", server.url, "--key", server.key, "--profile", profile, "--out", out, "--folds", "3", "--min-bucket", "3"];
    const result = JSON.parse((await judge(...args, "--json")).stdout);
    const context = show(result);
    expect(result.split, context).toEqual({
      fitItems: sampleItems.length,
      fitAnswers: questionCount,
      heldOutItems: sampleItems.length,
      heldOutAnswers: questionCount,
      inSample: false,
    });
    expect(result.heldOut.uncalibrated.overall.answers, context).toBe(questionCount);
    expect(result.heldOut.calibrated.overall.answers, context).toBe(questionCount);
    expect(result.folds.k, context).toBe(3);
    expect(result.folds.temperatures, context).toHaveLength(3);
    const written = temperaturesFor(await loadCalibrationFile(profile), result.model);
    for (const type of ["choice", "noul", "score"] as const) expect(written[type], context).toBeCloseTo(result.temperatures[type], 4);
    const text = (await judge(...args, "--dry-run")).stdout;
    expect(text, text).toMatch(new RegExp(`Calibration on ${questionCount} answers \\(${sampleItems.length} items\\), 3-fold cross-validated`));
    expect(text, text).toMatch(/Per fold \(fitted on the other folds\): choice [\d.–]+, noul [\d.–]+, score [\d.–]+/);
    expect(readFileSync(join(out, "report.html"), "utf8")).toMatch(/3-fold cross-validated/);
  });

  it("refuses --folds with --holdout, and more folds than items", async () => {
    const args = ["calibrate", sample, "--url", server.url, "--key", server.key, "--profile", join(dir, "never-folds.json"), "--dry-run"];
    await expect(judge(...args, "--folds", "3", "--holdout", "0.2")).rejects.toThrow(/--folds and --holdout are two ways to hold answers out: give one/);
    await expect(judge(...args, "--folds", "16")).rejects.toThrow(/--folds 16 needs at least 16 items; the dataset has 15/);
    await expect(judge(...args, "--folds", "1")).rejects.toThrow(/--folds/);
  });
});

describe("the whole CLI (runCli), as judge runs it", () => {
  it("runs calibrate with --json, progress on stderr only", async () => {
    const run = await runJudge([
      "calibrate",
      sample,
      "--url",
      server.url,
      "--key-file",
      keyFile,
      "--profile",
      join(dir, "whole-cli.json"),
      "--out",
      join(dir, "whole-cli"),
      "--json",
    ]);
    expect(run.status, show(run)).toBe(0);
    expect(JSON.parse(run.stdout).model).toBe(server.engine.modelId);
    expect(run.stderr, show(run)).toMatch(/calibrate: 15\/15 requests \(100%\)/);
  });

  it("reports dataset mistakes in one line per problem, with file and line, and exits 1", async () => {
    const bad = join(dir, "typo.jsonl");
    writeFileSync(bad, `${JSON.stringify({ questions: { q: { type: "noul", instructions: "x" } }, gold: { q: "yes" } })}\n`);
    const run = await runJudge(["eval", bad, "--key", "k"]);
    expect(run.status, show(run)).toBe(1);
    expect(run.stderr, show(run)).toBe(
      `judge: invalid dataset ${bad}:\n${bad}:1: gold.q: a noul gold answer is true, false, or the probability (0 to 1) that the statement holds\n`,
    );
  });
});
