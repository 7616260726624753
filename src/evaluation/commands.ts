import { readFile, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { DebiasMode } from "../judgment/debias.js";
import { createJudgmentClient, EvaluationRunError, type JudgmentClient } from "./client.js";
import { parseDataset, type DatasetItem } from "./dataset.js";
import { createProgress, type Progress } from "./progress.js";
import { LOG_PROBABILITY_FLOOR } from "./read-answer.js";
import { calibrateDiagram, calibrateReportHtml } from "./calibrate-report.js";
import { evalDiagram, evalReportHtml } from "./eval-report.js";
import { formatCalibrateText, formatEvalText } from "./report.js";
import { currentTemperatures, mergeProfile, readProfile, writeProfile } from "./profile.js";
import { runCalibration } from "./run-calibrate.js";
import { runEvaluation, type EvalChecks } from "./run-eval.js";

/**
 * What `judge eval` and `judge calibrate` do, apart from parsing the command line: read the
 * dataset and the key, talk to the server with progress on stderr, write the outputs, and
 * return the JSON summary and the text for people.
 */

export interface ServerOptions {
  url: string;
  key?: string;
  keyFile?: string;
  concurrency: number;
  retries: number;
  timeoutMs: number;
  model?: string;
}

export interface CommandIo {
  stderr: (text: string) => void;
  stderrIsTTY: boolean;
}

export interface CommandOutput {
  json: unknown;
  text: string;
}

export async function readKey(options: Pick<ServerOptions, "key" | "keyFile">): Promise<string> {
  if (options.key !== undefined && options.keyFile !== undefined) throw new EvaluationRunError("give either --key or --key-file, not both");
  if (options.key !== undefined) return options.key;
  if (options.keyFile === undefined) throw new EvaluationRunError("an API key is needed: --key <key> or --key-file <file>");
  const key = (await readText(options.keyFile, "key file")).trim();
  if (key === "") throw new EvaluationRunError(`key file ${options.keyFile} is empty`);
  return key;
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    throw new EvaluationRunError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

export async function loadDataset(file: string): Promise<DatasetItem[]> {
  return parseDataset(await readText(file, "dataset"), file);
}

/** A client whose retries are announced through whichever progress display is running. */
async function connect(options: ServerOptions, io: CommandIo, label: string) {
  let current: Progress | undefined;
  const client: JudgmentClient = createJudgmentClient({
    url: options.url,
    key: await readKey(options),
    timeoutMs: options.timeoutMs,
    retries: options.retries,
    onRetry: (e) => {
      const message = `${label}: retry ${e.attempt} in ${(e.delayMs / 1000).toFixed(1)} s after: ${e.reason}`;
      if (current) current.note(message);
      else io.stderr(`${message}\n`);
    },
  });
  const progress = (total: number) => (current = createProgress({ label, total, write: io.stderr, tty: io.stderrIsTTY }));
  return { client, progress };
}

export interface EvalCommandOptions extends ServerOptions {
  out: string;
  errorRates: number[];
  checks: EvalChecks;
  seed: number;
  debias?: DebiasMode;
  /** Sent as every request's `x_task`. */
  task?: string;
  folds?: number;
}

export async function evalCommand(dataset: string, options: EvalCommandOptions, io: CommandIo): Promise<CommandOutput> {
  const items = await loadDataset(dataset);
  const { client, progress } = await connect(options, io, "eval");
  const result = await runEvaluation({ ...options, items, client, progress });
  const context = { dataset, url: options.url };
  const files = {
    summary: path.join(options.out, "summary.json"),
    report: path.join(options.out, "report.html"),
    diagram: path.join(options.out, "reliability.svg"),
    predictions: path.join(options.out, "predictions.jsonl"),
  };
  const { records, ...rest } = result;
  const summary = { dataset, url: options.url, ...rest, files };
  await mkdir(options.out, { recursive: true });
  await writeFile(files.summary, `${JSON.stringify(summary, null, 2)}\n`);
  await writeFile(files.report, evalReportHtml(result, context));
  await writeFile(files.diagram, `${evalDiagram(`${dataset}: all answers`, result.models.join(", "), result.metrics.overall!)}\n`);
  await writeFile(files.predictions, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return { json: summary, text: formatEvalText(result, context, Object.values(files)) };
}

export interface CalibrateCommandOptions extends ServerOptions {
  profile: string;
  /** Directory for report.html and reliability.svg (written also under --dry-run: it is the report). */
  out: string;
  holdout: number;
  /** Cross-validate over this many folds instead of one held-out split. */
  folds?: number;
  seed: number;
  minBucket: number;
  dryRun: boolean;
  debias?: DebiasMode;
}

export async function calibrateCommand(dataset: string, options: CalibrateCommandOptions, io: CommandIo): Promise<CommandOutput> {
  const items = await loadDataset(dataset);
  const existing = await readProfile(options.profile).catch((error: Error) => {
    throw new EvaluationRunError(error.message);
  });
  const { client, progress } = await connect(options, io, "calibrate");
  // The model id is known only from the replies; its current entry is looked up per model.
  const result = await runCalibration({
    items,
    client,
    progress,
    concurrency: options.concurrency,
    holdout: options.holdout,
    folds: options.folds,
    seed: options.seed,
    minBucketAnswers: options.minBucket,
    model: options.model,
    debias: options.debias,
    currentFor: (modelId) => currentTemperatures(existing, modelId),
  });
  const notes: string[] = [];
  if (result.logitsSource !== "logits") {
    notes.push(
      `The server sent no logits for ${result.logitsSource === "mixed" ? "some" : "any"} answers: fitted on log(probabilities), clamped at ` +
        `${LOG_PROBABILITY_FLOOR}, instead. They already include any calibration the server applies, so the temperatures are relative to it.`,
    );
    io.stderr(`calibrate: ${notes[0]}\n`);
  }
  const profile = mergeProfile(existing, result.model, result.temperatures);
  if (!options.dryRun) await writeProfile(options.profile, profile);
  const written = { path: options.profile, written: !options.dryRun };
  const files = { report: path.join(options.out, "report.html"), diagram: path.join(options.out, "reliability.svg") };
  const context = { dataset, url: options.url, profile: written, notes };
  await mkdir(options.out, { recursive: true });
  await writeFile(files.report, calibrateReportHtml(result, context));
  await writeFile(files.diagram, `${calibrateDiagram(result, "overall", `${dataset}: all answers, model ${result.model}`)}\n`);
  const text = [...notes, formatCalibrateText(result, written), `Wrote ${files.report}, ${files.diagram}`].join("\n\n");
  return { json: { dataset, url: options.url, ...result, profile: written, notes, files }, text };
}
