import { Command, InvalidArgumentError, Option } from "commander";
import { isStoreError } from "../store/store.js";
import { registerAccountsCommands } from "./accounts.js";
import { CliError, emit, resolveConfig } from "./context.js";
import { registerKeysCommands } from "./keys.js";

/**
 * Entry point of the `judge` CLI (bin/judge.js imports this module; `npm run judge` runs it).
 * Commands whose implementations are heavy (the server, the model fixture writer) are imported
 * inside their actions, so `judge keys list` does not pay for loading the inference engine.
 */

const FIXTURE_PRESETS = ["tiny", "qwen2.5-0.5b", "qwen2.5-1.5b"] as const;
type FixturePresetName = (typeof FIXTURE_PRESETS)[number];

function buildProgram(): Command {
  const program = new Command("judge")
    .description("Administer the Typed Judgment Service: accounts, API keys, server, fixtures")
    .option("--db <path>", "SQLite database file (overrides JUDGE_DB)")
    .option("--json", "print machine-readable JSON instead of tables")
    .showHelpAfterError("(run with --help for usage)");

  registerAccountsCommands(program);
  registerKeysCommands(program);
  registerServeCommand(program);
  registerFixtureCommand(program);
  return program;
}

function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description("Run the HTTP service (configured by JUDGE_* environment variables)")
    .action(async (_options: unknown, command: Command) => {
      const config = resolveConfig(command);
      const { serveUntilSignalled } = await import("../main.js");
      await serveUntilSignalled(config);
    });
}

function registerFixtureCommand(program: Command): void {
  program
    .command("fixture")
    .description("Write a small random-weight GGUF model for tests")
    .addOption(
      new Option("--preset <preset>", "model shape to imitate")
        .choices(FIXTURE_PRESETS)
        .makeOptionMandatory(),
    )
    .requiredOption("--out <path>", "file to write")
    .option("--seed <n>", "seed for the random weights (non-negative integer)", parseSeed)
    .action(
      async (options: { preset: FixturePresetName; out: string; seed?: number }, command: Command) => {
        const { writeFixtureModel } = await import("../fixtures/fixture-model.js");
        const written = await writeFixtureModel(options.out, {
          preset: options.preset,
          seed: options.seed,
        });
        emit(command, {
          json: written,
          text: () =>
            `Wrote ${options.preset} fixture model to ${written.path} ` +
            `(${written.bytes} bytes, vocabulary of ${written.vocabSize}).`,
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
function reportFailure(error: unknown): void {
  if (error instanceof CliError || isStoreError(error)) {
    process.stderr.write(`judge: ${error.message}\n`);
  } else {
    process.stderr.write(`judge: unexpected error\n${error instanceof Error ? error.stack : String(error)}\n`);
  }
  process.exitCode = 1;
}

// Exit codes are set rather than forced with process.exit(), so buffered output is flushed
// and `serve` keeps running after its action returns.
await buildProgram().parseAsync(process.argv).catch(reportFailure);
