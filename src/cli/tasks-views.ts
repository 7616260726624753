import type { Metrics, QuestionReport } from "../judgment/heads/index.js";
import type { Task } from "../services/tasks/service.js";
import type { FitRecord, TaskRecord, VersionRecord } from "../services/types.js";
import { formatMoney } from "../views/money.js";
import { fitJson as apiFit, taskJson as apiTask, versionJson as apiVersion } from "../views/tasks.js";
import { formatTable, formatTimestamp } from "../views/text.js";

/**
 * What `judge tasks …` prints. Under --json the shapes are those of /v1/tasks… (src/views/tasks.ts,
 * which the route writes too), with the account and the micro-euros beside them, so a script
 * moves between the CLI and HTTP.
 */

export interface VersionReport {
  seed?: number;
  examples?: number;
  inputTokens?: number;
  chargedMicro?: number;
  questions: Record<string, QuestionReport>;
}

/** A fit as /v1/tasks… writes it, with the micro-euros beside the euros as the billing commands print them. */
export const fitJson = (fit: FitRecord) => ({ ...apiFit(fit), charged_micro: fit.chargedMicro });

export const reportOf = (version: VersionRecord) => JSON.parse(version.report) as VersionReport;

export const versionJson = (version: VersionRecord) => ({ ...apiVersion(version), report: reportOf(version) });

/** The task as GET /v1/tasks/{task} shows it, with its account. */
export function taskJson(task: Task, versions: readonly VersionRecord[], fits: readonly FitRecord[]) {
  const { id, name, ...rest } = apiTask(task, versions, fits[0]);
  return { id, name, account: task.record.accountId, ...rest, latest_fit: fits[0] ? fitJson(fits[0]) : null };
}

/** `tasks create --json`: the task with its latest version (binding and report), null before a fit. */
export function taskWithReportJson(task: Task, versions: readonly VersionRecord[], fits: readonly FitRecord[]) {
  return { ...taskJson(task, versions, fits), latest_version: versions[0] ? versionJson(versions[0]) : null };
}

/** `tasks show --json`: the task, every fit and every version with its report, newest first. */
export function taskDetailJson(task: Task, versions: readonly VersionRecord[], fits: readonly FitRecord[]) {
  return { ...taskJson(task, versions, fits), fits: fits.map(fitJson), versions: versions.map(versionJson) };
}

export function formatTaskList(rows: readonly { record: TaskRecord; versions: number; latest?: FitRecord }[]): string {
  if (rows.length === 0) return "No tasks.";
  return formatTable(
    ["ID", "NAME", "EXAMPLES", "VERSIONS", "LATEST FIT", "CREATED"],
    rows.map(({ record, versions, latest }) => [
      record.id,
      record.name,
      String(record.examples),
      String(versions),
      latest ? fitState(latest) : "-",
      formatTimestamp(record.createdAt),
    ]),
  );
}

/** "running 3/10", "succeeded (v2)", "failed: insufficient_funds". */
export function fitState(fit: FitRecord): string {
  if (fit.state === "running") return `running ${fit.done}/${fit.total}`;
  if (fit.state === "succeeded") return `succeeded (v${fit.version})`;
  return `failed: ${fit.error?.code ?? "unknown"}`;
}

export function formatTask(task: Task, versions: readonly VersionRecord[], fits: readonly FitRecord[]): string {
  const { record, definition } = task;
  const questions = Object.entries(definition.questions).map(([id, q]) => `${id} (${q.type})`);
  const floors = Object.entries(definition.abstainBelow).map(([id, floor]) => `${id} ${floor}`);
  const lines = [
    `Task ${record.id} ${JSON.stringify(record.name)} of account ${record.accountId}: ${record.examples} examples, created ${formatTimestamp(record.createdAt)}.`,
    `Questions: ${questions.join(", ")}.`,
    ...(floors.length > 0 ? [`Abstain below: ${floors.join(", ")}.`] : []),
    "",
    ...(fits.length === 0 ? ["No fits yet."] : ["Fits (newest first):", formatFits(fits)]),
  ];
  for (const version of versions) lines.push("", formatVersion(version));
  return lines.join("\n");
}

function formatFits(fits: readonly FitRecord[]): string {
  return formatTable(
    ["ID", "STATE", "MODEL", "READ", "TOKENS", "CHARGED", "CREATED", "FINISHED"],
    fits.map((fit) => [
      fit.id,
      fitState(fit),
      fit.model,
      `${fit.done}/${fit.total}`,
      String(fit.inputTokens),
      formatMoney(fit.chargedMicro),
      formatTimestamp(fit.createdAt),
      formatTimestamp(fit.finishedAt),
    ]),
  );
}

const figures = (metrics: Metrics | undefined) => (metrics ? `${metrics.accuracy.toFixed(3)} / ${metrics.nll.toFixed(3)}` : "-");

/** A version and, per question, the chosen head and held-out accuracy / NLL of the prior, the plain readout and the chosen head. */
export function formatVersion(version: VersionRecord): string {
  const report = reportOf(version);
  const charged = report.chargedMicro === undefined ? "" : `, ${formatMoney(report.chargedMicro)} charged`;
  const header = `Version ${version.version} (fit ${version.fitId}, model ${version.model}, created ${formatTimestamp(version.createdAt)}${charged}); held-out accuracy / NLL:`;
  const rows = Object.entries(report.questions).map(([id, q]) => [
    id,
    q.chosen,
    String(q.examples),
    String(q.folds),
    figures(q.prior),
    figures(q.plain),
    figures(q[q.chosen]),
  ]);
  return `${header}\n${formatTable(["QUESTION", "HEAD", "EXAMPLES", "FOLDS", "PRIOR", "PLAIN", "CHOSEN"], rows)}`;
}
