import type { Command } from "commander";
import { messageOf } from "../error-message.js";
import { temperaturesFor } from "../judgment/calibration.js";
import type { AccountSummary } from "../services/accounts.js";
import { accountPayer, type Payer } from "../services/billing.js";
import type { Services } from "../services/build.js";
import { InsufficientFundsError, KeyBudgetExhaustedError } from "../services/errors.js";
import { JudgingRefusal } from "../services/judging/errors.js";
import { modelChoice, pickModel } from "../services/served-models/pick.js";
import type { ServedModel } from "../services/served-models/registry.js";
import { TaskInputError } from "../services/tasks/errors.js";
import type { Task } from "../services/tasks/service.js";
import type { FitRecord, VersionRecord } from "../services/types.js";
import { formatMoney } from "../views/money.js";
import { CliError, globalOptions, ioOf, resolveConfig, type OutputStream } from "./context.js";

/**
 * A fit from the CLI: the task's examples read through the configured models (built as a server
 * builds them, composition.ts's buildModels), billed to the account as its requests would be
 * (the plan's allowance first, then the balance; no key, so no key budget), in this process.
 * The fit runs in the tasks service's background as it does under the server; the command polls
 * its record for progress and returns once it has ended. Closing the services stops a fit still
 * running (it fails as interrupted), so a CLI fit cannot outlive its command.
 */

export interface FitFlags {
  model?: string;
  seed?: number;
}

/** How often the fit's record is read for progress. */
const POLL_MS = 150;

/** Who pays: the account, on its plan's terms, as a request with one of its keys would (without the key's own budget). */
function payerOf(summary: AccountSummary): Payer {
  const { account, plan } = summary;
  if (account.disabledAt !== null) {
    throw new CliError(
      `account ${account.id} is disabled: its keys are refused, and so is a fit paid by it; enable it first (judge accounts enable ${account.id})`,
    );
  }
  return accountPayer(account, plan);
}

/**
 * Starts a fit of `task` paid by the account and waits for it to end, showing the examples read
 * on stderr. Resolves with the fit and its version when it succeeded; throws a CliError naming
 * the fit's error code when it could not start or failed (`lead` opens that message).
 */
export async function fitAndWait(
  command: Command,
  services: Services,
  task: Task,
  summary: AccountSummary,
  flags: FitFlags,
  lead = "",
): Promise<{ fit: FitRecord; version: VersionRecord }> {
  const payer = payerOf(summary);
  const config = resolveConfig(command);
  const { stdout, stderr } = ioOf(command);
  // Loaded here: the composition root brings the HTTP app, which other commands need not load.
  const { buildModels, loadCalibration } = await import("../composition.js");
  const models = await buildModels(config, services, { showDownloadProgress: !globalOptions(command).json && stdout.isTTY === true }).catch(
    (error: unknown) => {
      throw new CliError(`${lead}cannot set up the engine: ${messageOf(error)}`);
    },
  );
  try {
    const picked = pickModel(models, flags.model, [], payer.terms.allowedModels);
    if (!("model" in picked)) throw new CliError(`${lead}${picked.code}: ${picked.message}`);
    const served = picked.model;
    const calibration = await loadCalibration(config).catch((error: unknown) => {
      throw new CliError(`${lead}${messageOf(error)}`);
    });
    await modelReady(served, lead);
    const choice = modelChoice(served, (id) => temperaturesFor(calibration, id));
    await sweepStaleFits(command, services);
    let fit = await services.tasks.fit(task, choice, payer, { seed: flags.seed }).catch((error: unknown) => {
      throw refusalOf(error, lead) ?? error;
    });
    const progress = progressLine(stderr, fit, task);
    while (fit.state === "running") {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      const read = await services.tasks.getFit(task, fit.id);
      if (!read) throw new CliError(`${lead}fit ${fit.id} is gone: its task was deleted while it ran`);
      fit = read;
      progress(fit);
    }
    const version = fit.state === "succeeded" && fit.version !== undefined ? await services.tasks.version(task, fit.version) : undefined;
    if (!version) {
      const { code, message } = fit.error ?? { code: "internal_error", message: "the fit ended without a version" };
      throw new CliError(
        `${lead}fit ${fit.id} failed: ${code}: ${message} (${fit.done} of ${fit.total} examples read, ${formatMoney(fit.chargedMicro)} charged to the balance)`,
      );
    }
    return { fit, version };
  } finally {
    // A fit still running here (the command failed while polling) stops before its model closes.
    await services.tasks.close();
    await models.close().catch(() => undefined);
  }
}

/**
 * Fails the fits whose process went quiet (a `judge tasks fit` killed midway, a server that
 * crashed), as a server's sweeper would: without a server on the database, nothing else would,
 * and the task could be neither fitted again nor deleted.
 */
export async function sweepStaleFits(command: Command, services: Services): Promise<void> {
  const { fitQuietMs } = await import("../composition.js");
  const swept = await services.tasks.sweep(fitQuietMs(resolveConfig(command).requestTimeoutMs), Date.now());
  if (swept > 0) ioOf(command).stderr.write(`Failed ${swept} fit${swept === 1 ? "" : "s"} whose process had stopped (nothing more is charged for them).\n`);
}

/** The model loads (or fails) before the fit starts, so the first example is not refused as the model loading. */
async function modelReady(served: ServedModel, lead: string): Promise<void> {
  const failed = (detail: string) => new CliError(`${lead}the model ${JSON.stringify(served.id)} is unavailable: ${detail}`);
  try {
    await served.engine.ready;
  } catch (error) {
    throw failed(messageOf(error));
  }
  const status = await served.engine.status();
  if (status.state === "failed") throw failed(status.detail);
}

/** A fit refused before it began (its first example could not be paid, the model refused it): nothing was charged. */
function refusalOf(error: unknown, lead: string): CliError | undefined {
  if (error instanceof TaskInputError) return new CliError(`${lead}${error.message}`);
  const code =
    error instanceof InsufficientFundsError
      ? "insufficient_funds"
      : error instanceof KeyBudgetExhaustedError
        ? "key_budget_exhausted"
        : error instanceof JudgingRefusal
          ? error.code
          : undefined;
  return code === undefined ? undefined : new CliError(`${lead}the fit was refused: ${code}: ${messageOf(error)}; nothing was charged`);
}

/** "fit fit_…: 3/10 examples read" on stderr, once per change: rewritten in place on a terminal, a line each otherwise. */
function progressLine(stderr: OutputStream, started: FitRecord, task: Task): (fit: FitRecord) => void {
  const tty = stderr.isTTY === true;
  stderr.write(`Fitting task ${task.record.id} (${JSON.stringify(task.record.name)}) on ${started.model}: fit ${started.id}, ${started.total} examples\n`);
  let shown = -1;
  let width = 0;
  return (fit) => {
    if (fit.done === shown && fit.state === "running") return;
    shown = fit.done;
    const stage = fit.state !== "running" ? `, ${fit.state}` : fit.done === fit.total ? ", fitting the heads" : "";
    const line = `fit ${fit.id}: ${fit.done}/${fit.total} examples read, ${formatMoney(fit.chargedMicro)} charged${stage}`;
    // On a terminal the line is rewritten in place, padded over a longer one before it.
    stderr.write(tty ? `\r${line.padEnd(width)}${fit.state === "running" ? "" : "\n"}` : `${line}\n`);
    width = Math.max(width, line.length);
  };
}
