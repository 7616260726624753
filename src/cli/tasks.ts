import type { Command } from "commander";
import { readFile } from "node:fs/promises";
import type { Services } from "../services/build.js";
import { parseTaskJsonl, TASK_LIMITS, type TaskInput } from "../services/tasks/definition.js";
import { TaskInputError } from "../services/tasks/errors.js";
import type { Task } from "../services/tasks/service.js";
import { CliError, emit, requireAccount, resolveConfig, withServices } from "./context.js";
import { followUp } from "./follow-up.js";
import { parseWholeNumber } from "./options.js";
import { fitAndWait, sweepStaleFits, type FitFlags } from "./tasks-fit.js";
import { fitJson, formatTask, formatTaskList, formatVersion, taskDetailJson, taskJson, taskWithReportJson, versionJson } from "./tasks-views.js";

/**
 * `judge tasks …`: a tenant's tasks (docs/concepts/tasks.md) administered on the database, as
 * /v1/tasks does with the tenant's key: create one from a `judge eval` dataset (JSONL, read by
 * the API's own parser), fit it on a configured model paid by the account (tasks-fit.ts), show
 * its fits and versions with their held-out reports, delete it.
 */

interface AccountFlag {
  account: string;
}

interface FitCommandFlags {
  wait?: boolean;
  model?: string;
  seed?: string;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** The largest seed a fit takes (the API's FitBody). */
const MAX_SEED = 2_147_483_647;

export function registerTasksCommands(program: Command): void {
  const tasks = program.command("tasks").description("Manage an account's tasks: create from labelled examples, fit on a model, show reports, delete");

  const fitOptions = (command: Command) =>
    command
      .option("--model <id>", "the configured model to fit on (JUDGE_MODEL, or an id or alias of JUDGE_MODELS; default: the default model)")
      .option("--seed <n>", "seed of the folds and the fitting (default 0): the same examples and seed give the same heads");

  fitOptions(
    tasks
      .command("create")
      .description("Create a task from a JSONL file of labelled examples (`judge eval`'s dataset format); --wait also fits it")
      .requiredOption("--account <accountId>", "the account that owns the task (and pays for its fit)")
      .requiredOption("--name <name>", "the task's name, unique in the account")
      .requiredOption("--data <file.jsonl>", "one example a line: { id?, state, questions, gold }")
      .option("--abstain-below <question=floor>", "a confidence floor in (0, 1) for a question: answers below it carry x_abstain (repeatable)", collect, [])
      .option("--wait", "fit the task now on the configured model, paid by the account, and wait for the fit to end"),
  ).action(async (options: AccountFlag & FitCommandFlags & { name: string; data: string; abstainBelow: string[] }, command: Command) => {
    const flags = fitFlags(options, "create");
    const floors = parseFloors(options.abstainBelow);
    const input = await readTaskFile(command, options.name, options.data, floors);
    await withServices(command, async (services) => {
      const summary = await requireAccount(services, options.account);
      const task = await services.tasks.create(options.account, input);
      if (!options.wait) {
        emit(command, {
          json: await shownJson(services, task),
          text: () =>
            `${created(task)}\n${followUp(command).line("Fit it (billed to the account) with:", `tasks fit --account ${options.account} ${task.record.id} --wait`)}`,
        });
        return;
      }
      const lead = `task ${task.record.id} was created, but `;
      const { version } = await fitAndWait(command, services, task, summary, flags, lead);
      emit(command, { json: await shownJson(services, task), text: () => `${created(task)}\n${formatVersion(version)}` });
    });
  });

  tasks
    .command("list")
    .description("List an account's tasks with their versions and latest fit")
    .requiredOption("--account <accountId>", "the account")
    .action(async (options: AccountFlag, command: Command) => {
      await withServices(command, async (services) => {
        await requireAccount(services, options.account);
        const records = await services.tasks.list(options.account);
        const shown = await Promise.all(
          records.map(async (record) => {
            const task = (await services.tasks.get(options.account, record.id))!;
            const [versions, fits] = await Promise.all([services.tasks.versions(task), services.tasks.fits(task)]);
            return { task, versions, fits };
          }),
        );
        emit(command, {
          json: { tasks: shown.map(({ task, versions, fits }) => taskJson(task, versions, fits)) },
          text: () => formatTaskList(shown.map(({ task, versions, fits }) => ({ record: task.record, versions: versions.length, latest: fits[0] }))),
        });
      });
    });

  tasks
    .command("show")
    .description("Show a task, its fits, and its versions with each question's chosen head and held-out accuracy / NLL")
    .requiredOption("--account <accountId>", "the account that owns the task")
    .argument("<task>", "the task's id (task_…) or name")
    .action(async (idOrName: string, options: AccountFlag, command: Command) => {
      await withServices(command, async (services) => {
        const task = await requireTask(command, services, options.account, idOrName);
        const [versions, fits] = await Promise.all([services.tasks.versions(task), services.tasks.fits(task)]);
        emit(command, { json: taskDetailJson(task, versions, fits), text: () => formatTask(task, versions, fits) });
      });
    });

  fitOptions(
    tasks
      .command("fit")
      .description("Fit a task on a configured model, paid by the account (every example read and billed like a request), and wait for it")
      .requiredOption("--account <accountId>", "the account that owns the task and pays for the fit")
      .argument("<task>", "the task's id (task_…) or name")
      .option("--wait", "required: a fit the CLI starts runs in its own process and ends with the command"),
  ).action(async (idOrName: string, options: AccountFlag & FitCommandFlags, command: Command) => {
    const flags = fitFlags(options, "fit");
    if (!options.wait) {
      throw new CliError(
        "a fit started by the CLI runs in this process, which must stay until it ends: give --wait (to leave a fit running in the background, start it on a server: POST /v1/tasks/{task}/fits)",
      );
    }
    await withServices(command, async (services) => {
      const summary = await requireAccount(services, options.account);
      const task = await requireTask(command, services, options.account, idOrName);
      const { fit, version } = await fitAndWait(command, services, task, summary, flags);
      emit(command, {
        json: { fit: fitJson(fit), version: versionJson(version) },
        text: () => `Fit ${fit.id} of task ${task.record.id} succeeded: version ${version.version}.\n${formatVersion(version)}`,
      });
    });
  });

  tasks
    .command("delete")
    .description("Delete a task with its examples, fits and versions (refused while a fit runs); the ledger keeps what its fits were charged")
    .requiredOption("--account <accountId>", "the account that owns the task")
    .argument("<task>", "the task's id (task_…) or name")
    .action(async (idOrName: string, options: AccountFlag, command: Command) => {
      const task = await withServices(command, async (services) => {
        const found = await requireTask(command, services, options.account, idOrName);
        await sweepStaleFits(command, services);
        await services.tasks.remove(options.account, found.record.id);
        return found;
      });
      emit(command, {
        json: { id: task.record.id, name: task.record.name, deleted: true },
        text: () => `Deleted task ${task.record.id} (${JSON.stringify(task.record.name)}) with its examples, fits and versions.`,
      });
    });
}

/** --model and --seed choose a fit; checked before anything opens. */
function fitFlags(options: FitCommandFlags, command: "create" | "fit"): FitFlags {
  if (command === "create" && !options.wait && (options.model !== undefined || options.seed !== undefined)) {
    throw new CliError("--model and --seed choose the fit: give --wait too, or fit later with `judge tasks fit`");
  }
  return { model: options.model, seed: options.seed === undefined ? undefined : parseWholeNumber(options.seed, "--seed", { min: 0, max: MAX_SEED }) };
}

/** `--abstain-below agrees=0.6`, once per question. */
function parseFloors(values: readonly string[]): Record<string, number> {
  const floors: Record<string, number> = {};
  for (const value of values) {
    const match = /^(.+)=([^=]+)$/.exec(value);
    const floor = match ? Number(match[2].trim()) : Number.NaN;
    if (!match || !/^\s*(0?\.\d+|\d+(\.\d+)?)\s*$/.test(match[2]) || !(floor > 0 && floor < 1)) {
      throw new CliError(`--abstain-below must be QUESTION=FLOOR with a floor above 0 and below 1, e.g. agrees=0.6; got ${JSON.stringify(value)}`);
    }
    const id = match[1];
    if (Object.hasOwn(floors, id)) throw new CliError(`--abstain-below: ${JSON.stringify(id)} is given twice`);
    floors[id] = floor;
  }
  return floors;
}

/** The JSONL file, within the API's upload limit, as UTF-8 without NUL, parsed as the API parses an upload. */
async function readTaskFile(command: Command, name: string, file: string, floors: Record<string, number>): Promise<TaskInput> {
  const bytes = await readFile(file).catch((error: NodeJS.ErrnoException) => {
    throw new CliError(`--data ${file}: cannot read the file (${error.code ?? error.message})`);
  });
  if (bytes.length > TASK_LIMITS.maxUploadBytes) {
    throw new CliError(`--data ${file}: ${bytes.length} bytes; a task's examples are at most ${TASK_LIMITS.maxUploadBytes / 1_048_576} MB`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new CliError(`--data ${file}: not valid UTF-8`);
  }
  if (text.includes("\u0000") || /\\u0000/i.test(text)) throw new CliError(`--data ${file}: holds a NUL character (U+0000)`);
  try {
    return parseTaskJsonl(name, text, floors, resolveConfig(command).maxQuestions);
  } catch (error) {
    if (error instanceof TaskInputError)
      throw new CliError(error.message.startsWith("name:") ? `--name: ${error.message.slice(5).trim()}` : `${file}: ${error.message}`);
    throw error;
  }
}

async function requireTask(command: Command, services: Services, accountId: string, idOrName: string): Promise<Task> {
  await requireAccount(services, accountId);
  const task = await services.tasks.get(accountId, idOrName);
  if (task) return task;
  const list = followUp(command).command(`tasks list --account ${accountId}`);
  throw new CliError(`No task ${JSON.stringify(idOrName)} in account ${accountId}${list ? `; see \`${list}\`` : ""}`);
}

async function shownJson(services: Services, task: Task) {
  const [versions, fits] = await Promise.all([services.tasks.versions(task), services.tasks.fits(task)]);
  return taskWithReportJson(task, versions, fits);
}

function created(task: Task): string {
  const questions = Object.keys(task.definition.questions).join(", ");
  return `Created task ${task.record.id} (${JSON.stringify(task.record.name)}) for account ${task.record.accountId}: ${task.record.examples} examples, questions ${questions}.`;
}
