import type { Command } from "commander";
import { userInfo } from "node:os";
import { loadConfig, parseConfig } from "../config/environment.js";
import type { Config } from "../config/types.js";
import type { Services } from "../services/build.js";
import type { AccountSummary } from "../services/accounts.js";
import type { AdminActor } from "../services/types.js";
import { messageOf } from "../error-message.js";

/** Options defined on the root program and accepted before or after any subcommand. */
export interface GlobalOptions {
  db?: string;
  json?: boolean;
  /** Create the database when it does not exist; without it a missing one is refused. */
  create?: boolean;
}

/** A mistake by the person running the CLI: reported as one line, without a stack trace. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliError";
  }
}

/** What a command writes to: the process's streams under bin/judge.js, a test's buffers in process. */
export interface OutputStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** A run's streams and environment, given to runCli (program.ts) and found by every command through ioOf. */
export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  /** The JUDGE_* settings to read; without it, the process's own (read in config/environment.ts alone). */
  env?: Record<string, string | undefined>;
}

// Keyed by the root program: a run's commands are its descendants, and each run builds its own.
const IO = new WeakMap<Command, CliIo>();

export function bindIo(program: Command, io: CliIo): void {
  IO.set(program, io);
}

export function ioOf(command: Command): CliIo {
  let root = command;
  while (root.parent) root = root.parent;
  const io = IO.get(root);
  if (!io) throw new Error(`judge ${command.name()}: a command run outside runCli has no streams`);
  return io;
}

export function globalOptions(command: Command): GlobalOptions {
  return command.optsWithGlobals<GlobalOptions>();
}

/** The environment's configuration with command-line overrides applied. */
export function resolveConfig(command: Command, overrides: Record<string, string> = {}): Config {
  let config: Config;
  try {
    const { env } = ioOf(command);
    config = env ? parseConfig({ ...env, ...overrides }) : loadConfig(overrides);
  } catch (error) {
    throw new CliError(messageOf(error));
  }
  const { db } = globalOptions(command);
  return db === undefined ? config : { ...config, db };
}

/**
 * Builds the services (as the server does) for the duration of one command, closing them even
 * on failure. The database must already exist unless `--create` is given: a mistyped `--db`
 * must fail, not show an empty database that looks like lost data.
 */
export async function withServices<T>(command: Command, run: (services: Services) => T | Promise<T>): Promise<T> {
  const config = resolveConfig(command);
  const { create } = globalOptions(command);
  // Refused by name: the store's "no database here … or pass --create" would lead to a
  // throwaway database that the next command cannot see either.
  if (isInMemory(config.db) && !create) {
    throw new CliError(
      `--db ${config.db || '""'} is a new, empty database for every command, so there is nothing in it to administer; give the file or postgres:// URL the server uses`,
    );
  }
  // Imported here: the store's drivers and the metrics registry load for commands that use them,
  // not for `--help`.
  const { buildServices } = await import("../services/build.js");
  const services = await buildServices(config, { mustExist: !create });
  try {
    return await run(services);
  } finally {
    await services.close();
  }
}

/** `:memory:`, and SQLite's private temporary database (""): gone when the command exits. */
export const isInMemory = (db: string) => db === ":memory:" || db === "";

/** Prints `json` as JSON under `--json`, otherwise the human-readable `text()`. */
export function emit(command: Command, output: { json: unknown; text: () => string }): void {
  const rendered = globalOptions(command).json ? JSON.stringify(output.json, null, 2) : output.text();
  ioOf(command).stdout.write(`${rendered}\n`);
}

/** A mistyped id must fail rather than look like an account with no keys or no ledger entries. */
export async function requireAccount(services: Services, accountId: string): Promise<AccountSummary> {
  const summary = await services.accounts.summary(accountId);
  if (!summary) throw new CliError(`No account with id ${accountId}`);
  return summary;
}

/**
 * Who the audit log says made a change from the CLI: "cli" and the operating system's user
 * running it. The CLI writes to the database directly, with no credential of its own: whoever can
 * run it can read the database anyway, so the OS user is the most the log can honestly say.
 */
export function cliActor(): AdminActor {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    // A container's uid without a passwd entry: the uid is all there is.
  }
  return { kind: "cli", user: user || `uid-${process.getuid?.() ?? "unknown"}` };
}
