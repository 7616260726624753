import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { FIXTURE_PRESETS, FIXTURE_WEIGHT_TYPES, writeFixtureModel, type FixturePreset, type FixtureWeightType } from "../gguf/fixture-model.js";
import { VocabSourceError } from "../gguf/fixture-tokenizer.js";
import { DatabaseMissingError, isStoreError } from "../record-errors.js";
import { registerAccountsCommands } from "./accounts.js";
import { registerAdminsCommands } from "./admins.js";
import { registerAuditCommands } from "./audit.js";
import { registerBalanceCommands } from "./balance.js";
import { registerBenchCommand } from "./bench.js";
import { FLAG_SETTINGS, flagOf, overridesFromFlags, SETTING_HELP, settingsHelp } from "../config/help.js";
import { oneLine } from "../views/text.js";
import { bindIo, CliError, emit, resolveConfig, type CliIo, type OutputStream } from "./context.js";
import { registerEvaluationCommands } from "./evaluation.js";
import { registerKeysCommands } from "./keys.js";
import { registerLedgerCommands } from "./ledger.js";
import { registerPlansCommands } from "./plans.js";
import { registerTasksCommands } from "./tasks.js";

/**
 * The `judge` CLI as a function of its arguments, streams and environment: main.ts runs it for
 * the process, and the tests run it in process. The server is imported inside its action, so
 * `judge keys list` does not pay for loading the inference engine.
 */

/**
 * Runs one command line (the arguments after `judge`) and returns its exit code. Nothing here
 * exits the process or touches its streams: commander's own exits become exceptions
 * (exitOverride) and its output goes to `io` (configureOutput).
 */
export async function runCli(args: readonly string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync(args, { from: "user" });
    return 0;
  } catch (error) {
    // Commander has written its help or its refusal already; its code is 0 for --help.
    if (error instanceof CommanderError) return error.exitCode;
    reportFailure(error, io.stderr);
    return 1;
  }
}

/** A terminal's width, as commander takes it by default; 80 (commander's default) elsewhere. */
const helpWidth = (stream: OutputStream) => (stream.isTTY && stream.columns) || 80;

function buildProgram(io: CliIo): Command {
  const program = new Command("judge")
    .description("Administer the Typed Judgment Service: plans, accounts, balances, API keys, ledger, server, fixtures")
    .option("--db <path or url>", "SQLite database file or postgres:// URL (overrides JUDGE_DB)")
    .option("--json", "print machine-readable JSON instead of tables")
    .option("--create", "create the database if it does not exist (otherwise only `serve` creates one)")
    // Subcommands inherit both settings, as they are made after them.
    .exitOverride()
    // Commander's own refusals (an unknown option, a missing argument) as one line like every
    // other error here.
    .configureOutput({
      writeOut: (text) => void io.stdout.write(text),
      writeErr: (text) => void io.stderr.write(text),
      getOutHelpWidth: () => helpWidth(io.stdout),
      getErrHelpWidth: () => helpWidth(io.stderr),
      getOutHasColors: () => false,
      getErrHasColors: () => false,
      outputError: (text, write) =>
        write(
          `judge: ${text
            .replace(/^error: /, "")
            .trim()
            .split(/\s*\n\s*/)
            .join(" ")} (run with --help for usage)\n`,
        ),
    });
  bindIo(program, io);

  registerPlansCommands(program);
  registerAccountsCommands(program);
  registerBalanceCommands(program);
  registerKeysCommands(program);
  registerLedgerCommands(program);
  registerAdminsCommands(program);
  registerAuditCommands(program);
  registerTasksCommands(program);
  registerServeCommand(program);
  registerFixtureCommand(program);
  registerEvaluationCommands(program);
  registerBenchCommand(program);
  return program;
}

function registerServeCommand(program: Command): void {
  const serve = program
    .command("serve")
    .description("Run the HTTP service (configured by JUDGE_* environment variables or the flags below)")
    .addHelpText("after", settingsHelp());
  for (const name of FLAG_SETTINGS) serve.option(`${flagOf(name)} <value>`, `${SETTING_HELP[name]} (${name})`);
  serve.action(async (options: Record<string, unknown>, command: Command) => {
    const config = resolveConfig(command, overridesFromFlags(options));
    const { serveUntilSignalled } = await import("../main.js");
    await serveUntilSignalled(config);
  });
}

function registerFixtureCommand(program: Command): void {
  program
    .command("fixture")
    .description("Write a random-weight GGUF model for tests: a real model's shapes and tokenizer, knowing nothing")
    .addOption(new Option("--preset <preset>", "model shape to imitate").choices(FIXTURE_PRESETS).makeOptionMandatory())
    .requiredOption("--out <path>", "file to write")
    .option("--seed <n>", "seed for the random weights (non-negative integer)", parseSeed)
    .addOption(new Option("--weights <type>", "type of the weight matrices (default: the preset's)").choices(FIXTURE_WEIGHT_TYPES))
    .option(
      "--vocab <vocab>",
      "tokenizer: made-up, a llama.cpp vocabulary (qwen2, llama-bpe, phi-3, …) or a .gguf file to copy it from " +
        "(default: the preset's; tiny is made-up, the others qwen2)",
    )
    .option("--if-missing", "leave --out alone when it already exists (npm run start:fixture writes it once)")
    .action(
      async (
        options: { preset: FixturePreset; out: string; seed?: number; weights?: FixtureWeightType; vocab?: string; ifMissing?: boolean },
        command: Command,
      ) => {
        // Files are written whole or not at all (renamed into place), so one that exists is complete.
        if (options.ifMissing && existsSync(options.out)) {
          emit(command, { json: { path: resolve(options.out), written: false }, text: () => `${options.out} exists; left as it is.` });
          return;
        }
        const written = await writeFixtureModel(options.out, {
          preset: options.preset,
          seed: options.seed,
          weightType: options.weights,
          vocab: options.vocab,
        }).catch((error: unknown) => {
          throw error instanceof VocabSourceError ? new CliError(`--vocab: ${error.message}`) : error;
        });
        emit(command, {
          json: written,
          text: () =>
            `Wrote ${options.preset} fixture model to ${written.path} ` + `(${written.bytes} bytes, vocabulary of ${written.vocabSize} from ${written.vocab}).`,
        });
      },
    );
}

function parseSeed(value: string): number {
  const seed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(seed)) {
    throw new InvalidArgumentError("Expected a non-negative integer.");
  }
  return seed;
}

/** User errors become one line on stderr; anything else is a bug and keeps its stack trace. */
function reportFailure(error: unknown, stderr: OutputStream): void {
  if (error instanceof DatabaseMissingError) {
    stderr.write(`judge: ${oneLine(error.message)}; check --db or JUDGE_DB (and JUDGE_DB_SCHEMA), or pass --create to create it\n`);
  } else if (error instanceof CliError || isStoreError(error)) {
    // Bad settings are one line; a dataset's problems stay one line per problem.
    const message = /^Invalid configuration/.test(error.message) ? oneLine(error.message) : error.message;
    stderr.write(`judge: ${message}\n`);
  } else {
    stderr.write(`judge: unexpected error\n${error instanceof Error ? error.stack : String(error)}\n`);
  }
}
