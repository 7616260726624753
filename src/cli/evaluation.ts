import { InvalidArgumentError, Option, type Command } from "commander";
import { EvaluationRunError, JudgmentRequestError } from "../evaluation/client.js";
import { calibrateCommand, evalCommand, type CommandIo, type CommandOutput, type ServerOptions } from "../evaluation/commands.js";
import { DatasetError } from "../evaluation/dataset.js";
import { DEBIAS_MODES, type DebiasMode } from "../judgment/debias.js";
import { CliError, emit, ioOf } from "./context.js";

/**
 * `judge eval` and `judge calibrate`: clients of any server that speaks POST /v1/systemone.
 * The work is in src/evaluation/commands.ts; this file only reads the command line.
 */

const integer = (min: number) => (value: string) => {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`Expected an integer ≥ ${min}.`);
  return n;
};

/** A share in [0, 1): an error rate or the held-out fraction. */
const share = (value: string) => {
  const n = Number(value);
  if (value.trim() === "" || !(n >= 0 && n < 1)) throw new InvalidArgumentError("Expected a number from 0 up to (not including) 1.");
  return n;
};

const shares = (value: string) => value.split(",").map((part) => share(part.trim()));

function withServerOptions(command: Command): Command {
  return command
    .option("--url <url>", "base address of the judgment server", "http://127.0.0.1:8080")
    .option("--key <key>", "API key (or --key-file)")
    .option("--key-file <file>", "file holding the API key")
    .option("--concurrency <n>", "requests in flight at once", integer(1), 4)
    .option("--retries <n>", "retries per request on 429, 408, 5xx and network errors", integer(0), 5)
    .option("--timeout <ms>", "time limit of each attempt, in milliseconds", integer(1), 60_000)
    .option("--model <name>", "model name to send in each request (default: none, the server's own)");
}

interface ServerFlags {
  url: string;
  key?: string;
  keyFile?: string;
  concurrency: number;
  retries: number;
  timeout: number;
  model?: string;
}

const serverOptions = (flags: ServerFlags): ServerOptions => ({ ...flags, timeoutMs: flags.timeout });

/** The progress the work reports, on this run's stderr. */
function progressIo(command: Command): CommandIo {
  const { stderr } = ioOf(command);
  return { stderr: (text) => void stderr.write(text), stderrIsTTY: stderr.isTTY === true };
}

/** Mistakes in the dataset, the options or the server's replies are reported in one line. */
async function run(command: Command, work: () => Promise<CommandOutput>): Promise<void> {
  let output: CommandOutput;
  try {
    output = await work();
  } catch (error) {
    if (error instanceof DatasetError || error instanceof EvaluationRunError || error instanceof JudgmentRequestError) {
      throw new CliError(error.message);
    }
    throw error;
  }
  emit(command, { json: output.json, text: () => output.text });
}

interface EvalFlags extends ServerFlags {
  out: string;
  errorRate: number[];
  optionOrder?: "shift" | "shuffle";
  debias?: DebiasMode;
  task?: string;
  questionIds?: boolean;
  interference?: boolean;
  seed: number;
  folds: number;
}

interface CalibrateFlags extends ServerFlags {
  profile: string;
  out: string;
  holdout: number;
  folds?: number;
  seed: number;
  minBucket: number;
  dryRun?: boolean;
  debias?: DebiasMode;
}

const DATASET_HELP = "JSONL file: one item per line with state, questions and gold";

export function registerEvaluationCommands(program: Command): void {
  const evaluate = program
    .command("eval")
    .description("Measure the quality of a server's answers on a labelled JSONL dataset")
    .argument("<dataset>", DATASET_HELP)
    .option("--out <dir>", "directory for summary.json, report.html, reliability.svg and predictions.jsonl", "eval-report")
    .addOption(new Option("--error-rate <rates>", "error rates for coverage, comma-separated").argParser(shares).default([0.01, 0.05, 0.1], "0.01,0.05,0.1"))
    .addOption(new Option("--option-order <mode>", "check: ask again with choice options reordered").choices(["shift", "shuffle"]))
    .addOption(debiasOption())
    .option("--task <name>", "send x_task with every request: answer through that task's fitted heads (its name or id)")
    .option("--question-ids", "check: ask again with the questions renamed")
    .option("--interference", "check: ask each question alone as well as with its item's others")
    .option("--seed <n>", "seed of the shuffle and of the k-fold split", integer(0), 1)
    .option("--folds <k>", "folds of the k-fold temperature scaling in the quality table", integer(2), 5);
  withServerOptions(evaluate).action(async (dataset: string, flags: EvalFlags, command: Command) => {
    const checks = { order: flags.optionOrder, ids: flags.questionIds === true, interference: flags.interference === true };
    const options = {
      ...serverOptions(flags),
      out: flags.out,
      errorRates: flags.errorRate,
      seed: flags.seed,
      checks,
      debias: flags.debias,
      task: flags.task,
      folds: flags.folds,
    };
    await run(command, () => evalCommand(dataset, options, progressIo(command)));
  });

  const calibrate = program
    .command("calibrate")
    .description("Fit temperatures on a labelled JSONL dataset and write the calibration profile the server loads")
    .argument("<dataset>", DATASET_HELP)
    .requiredOption("--profile <file>", "calibration profile to create or update (JUDGE_CALIBRATION)")
    .option("--out <dir>", "directory for report.html and reliability.svg (before and after)", "calibrate-report")
    .option("--holdout <share>", "share of items held out to report calibration before and after", share, 0.3)
    .option(
      "--folds <k>",
      "cross-validate instead: score every answer with temperatures fitted on the other k-1 folds of items (the profile is fitted on all)",
      integer(2),
    )
    .option("--seed <n>", "seed of the held-out split or the folds", integer(0), 1)
    .option("--min-bucket <n>", "answers a label-count bucket needs for a temperature of its own", integer(1), 50)
    .option("--dry-run", "fit and report without writing the profile (the report is still written)")
    .addOption(debiasOption());
  withServerOptions(calibrate).action(async (dataset: string, flags: CalibrateFlags, command: Command) => {
    const { profile, out, holdout, folds, seed, minBucket } = flags;
    if (folds !== undefined && command.getOptionValueSource("holdout") === "cli") {
      throw new CliError("--folds and --holdout are two ways to hold answers out: give one");
    }
    const options = { ...serverOptions(flags), profile, out, holdout, folds, seed, minBucket, dryRun: flags.dryRun === true, debias: flags.debias };
    await run(command, () => calibrateCommand(dataset, options, progressIo(command)));
  });
}

/** Both commands send it the same way: eval measures, and calibrate fits, the mode the server will serve with. */
const debiasOption = () =>
  new Option("--debias <mode>", "send x_debias with every request: the server's option-order debiasing (default: the server's)").choices([...DEBIAS_MODES]);
