import { fileURLToPath } from "node:url";
import { start, StartupError, type RunningService, type StartOptions } from "./composition.js";
import { loadConfig } from "./config/environment.js";
import type { Config } from "./config/types.js";
import { messageOf } from "./error-message.js";
import { isStoreError } from "./record-errors.js";
import { oneLine } from "./views/text.js";

/**
 * The process around the composition root (composition.ts): `npm start` runs this file, and
 * `judge serve` calls serveUntilSignalled. It reads the configuration, starts, turns signals into
 * a graceful shutdown, and decides the exit code; a failed start is one line on stderr.
 */

/**
 * A repeat of the signal within this long is the same stop, not a second one: on Ctrl-C the
 * terminal signals the whole group and npm (`npm start`) passes its copy on too, and under npx
 * bin/judge.js signals itself when the shell between them dies.
 */
const SIGNAL_ECHO_MS = 2_000;

/**
 * Serves until SIGINT or SIGTERM, then shuts down gracefully and exits 0; another signal, once
 * SIGNAL_ECHO_MS have passed, exits at once. A start that fails prints one line and exits 1,
 * whichever entry point called it.
 */
export async function serveUntilSignalled(config: Config, options: StartOptions = {}): Promise<void> {
  let running: RunningService;
  try {
    running = await start(config, options);
  } catch (error) {
    // Exits rather than returning: a model still loading in the background would keep the process alive.
    failStart(error);
  }
  let stoppingSince: number | undefined;
  const shutdown = () => {
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince >= SIGNAL_ECHO_MS) process.exit(1);
      return;
    }
    stoppingSince = Date.now();
    void running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`judge: shutdown failed: ${messageOf(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}

/** One line for what the operator can fix (a setting, the database, the port); a bug keeps its stack. */
function failStart(error: unknown): never {
  if (error instanceof StartupError || isStoreError(error)) process.stderr.write(`judge: ${oneLine(error.message)}\n`);
  else process.stderr.write(`judge: unexpected error\n${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
}

function configOrFail(): Config {
  try {
    return loadConfig();
  } catch (error) {
    failStart(new StartupError(messageOf(error)));
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await serveUntilSignalled(configOrFail());
}
