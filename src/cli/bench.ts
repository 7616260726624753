import { existsSync, readFileSync } from "node:fs";
import { InvalidArgumentError, Option, type Command } from "commander";
import { formatReport } from "../bench/format-report.js";
import { parseConcurrencyList, parseDuration, parseInteger } from "../bench/options.js";
import { endpointUrl } from "../clients/judgment-endpoint.js";
import { BenchError, runBench, type BenchSettings } from "../bench/run.js";
import { CliError, emit, ioOf } from "./context.js";
import { messageOf } from "../error-message.js";

interface BenchOptions {
  url: string;
  key?: string;
  keyFile?: string;
  stateTokens: number;
  questions: number;
  options: number;
  concurrency: number[];
  duration?: number;
  requests?: number;
  warmup?: number;
  seed: number;
  model?: string;
  threads: number;
  ceilingReads: number;
  reuse: boolean;
  states?: number;
  allowRateLimit?: boolean;
}

const DEFAULT_DURATION_MS = 10_000;

/** commander reports an InvalidArgumentError as a usage error naming the option. */
const arg =
  <T>(parse: (value: string) => T) =>
  (value: string) => {
    try {
      return parse(value);
    } catch (error) {
      throw new InvalidArgumentError(messageOf(error));
    }
  };

/** `judge bench`: throughput and latency of any server of the interface, against the model's raw reading speed. */
export function registerBenchCommand(program: Command): void {
  program
    .command("bench")
    .description("Measure a running server: throughput, latency percentiles, and the share of the model's raw reading speed")
    .option("--url <url>", "base address of the server", "http://127.0.0.1:8080")
    .option("--key <key>", "API key to send")
    .option("--key-file <path>", "file holding the API key (keeps it out of the shell history)")
    .option(
      "--state-tokens <n>",
      "state length in the model's tokens",
      arg((v) => parseInteger(v, 1, 1_000_000)),
      300,
    )
    .option(
      "--questions <n>",
      "questions per request (choice, noul, score in turn)",
      arg((v) => parseInteger(v, 1, 1024)),
      3,
    )
    .option(
      "--options <n>",
      "options per choice question (and levels per score question, at most 10)",
      arg((v) => parseInteger(v, 2, 255)),
      4,
    )
    .addOption(new Option("--concurrency <list>", "concurrent clients, one phase per value").argParser(arg(parseConcurrencyList)).default([1, 4], "1,4"))
    .option("--duration <time>", "length of each phase: 30s, 2m, 500ms (default 10s)", arg(parseDuration))
    .option(
      "--requests <n>",
      "requests per phase, instead of a duration",
      arg((v) => parseInteger(v, 1)),
    )
    .option(
      "--warmup <n>",
      "unmeasured requests before each phase (default: one per client)",
      arg((v) => parseInteger(v, 0)),
    )
    .option(
      "--seed <n>",
      "seed of the generated requests",
      arg((v) => parseInteger(v, 0)),
      1,
    )
    .option("--model <path.gguf>", "the server's model file on this machine, to measure the raw reading ceiling")
    .option(
      "--threads <n>",
      "threads for the ceiling (0: the server's default, one fewer than the math cores)",
      arg((v) => parseInteger(v, 0, 512)),
      0,
    )
    .option(
      "--ceiling-reads <n>",
      "raw reads per ceiling sample",
      arg((v) => parseInteger(v, 1, 1000)),
      3,
    )
    .option("--no-reuse", "skip the phase that repeats one state (prefix reuse)")
    .option(
      "--states <k>",
      "add a phase whose requests take K states in turn (tenants interleaving states); run it against JUDGE_SLOTS=1 and K to see what slots save",
      arg((v) => parseInteger(v, 2, 1024)),
    )
    .option("--allow-rate-limit", "run even when the key's requests per minute are below the load (the figures then measure the limit)")
    .action(async (options: BenchOptions, command: Command) => {
      const settings = toSettings(options);
      const log = (line: string) => void ioOf(command).stderr.write(`${line}\n`);
      const report = await runBench(settings, { log }).catch((error: unknown) => {
        throw error instanceof BenchError ? new CliError(error.message) : error;
      });
      emit(command, { json: report, text: () => formatReport(report) });
    });
}

function toSettings(options: BenchOptions): BenchSettings {
  if (options.duration !== undefined && options.requests !== undefined) throw new CliError("give --duration or --requests, not both");
  if (options.model !== undefined && !existsSync(options.model)) throw new CliError(`no model file at ${options.model}`);
  try {
    endpointUrl(options.url);
  } catch (error) {
    throw new CliError(`--url: ${messageOf(error)}`);
  }
  return {
    url: options.url,
    key: readKey(options),
    shape: { stateTokens: options.stateTokens, questions: options.questions, options: options.options },
    concurrency: options.concurrency,
    limit: options.requests !== undefined ? { requests: options.requests } : { durationMs: options.duration ?? DEFAULT_DURATION_MS },
    warmup: options.warmup,
    seed: options.seed,
    modelPath: options.model,
    threads: options.threads,
    ceilingReads: options.ceilingReads,
    reuse: options.reuse,
    states: options.states,
    allowRateLimit: options.allowRateLimit ?? false,
  };
}

function readKey(options: BenchOptions): string {
  if (options.key !== undefined && options.keyFile !== undefined) throw new CliError("give --key or --key-file, not both");
  if (options.key !== undefined) return options.key;
  if (options.keyFile === undefined) throw new CliError("give the API key with --key or --key-file");
  try {
    return readFileSync(options.keyFile, "utf8").trim();
  } catch (error) {
    throw new CliError(`cannot read the key file: ${messageOf(error)}`);
  }
}
