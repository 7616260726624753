import { count, el, microEuros, numberCell, setFacts, when } from "./dom.js";
import { reliabilityDiagram } from "./reliability.js";

/**
 * A task version's report (docs/concepts/tasks.md): per question, the head answering it, the
 * held-out k-fold figures of the prior, the plain readout and each head, the examples of each
 * class, and the chosen head's reliability diagram. Every figure is the API's, shown as it is.
 */

export const HEAD_NAMES = { prior: "Prior", plain: "Plain readout", level1: "Level 1", level2: "Level 2" };
const METRICS = [
  ["accuracy", "Accuracy"],
  ["macroF1", "Macro-F1"],
  ["nll", "NLL"],
  ["ece", "ECE"],
  ["brier", "Brier"],
];

const figure = (value) => (typeof value === "number" && Number.isFinite(value) ? value.toFixed(3) : "—");
const headName = (kind) => HEAD_NAMES[kind]?.toLowerCase() ?? kind;

/** One version, open when it is the newest: a <details> with its facts and a part per question. */
export function versionReport(version, task, open) {
  const { report } = version;
  const facts = el("dl", { className: "facts" });
  setFacts(facts, [
    ["Model", version.model],
    ["Fitted", when(version.created_at)],
    ["Fit", el("code", {}, version.fit)],
    ["Examples", count(report.examples)],
    ["Seed", String(report.seed)],
    ["Input tokens", count(report.inputTokens)],
    ["Charged", microEuros(report.chargedMicro)],
  ]);
  const heads = Object.entries(version.heads)
    .map(([id, kind]) => `${id}: ${headName(kind)}`)
    .join(", ");
  return el(
    "details",
    { className: "task-version", attrs: { "data-version": version.version, "data-testid": `version-${version.version}`, ...(open ? { open: "" } : {}) } },
    el("summary", {}, el("strong", {}, `Version ${version.version}`), ` · ${when(version.created_at)} · ${heads}`),
    facts,
    ...Object.entries(report.questions).map(([id, question]) => questionReport(version.version, id, question, task)),
  );
}

function questionReport(versionNumber, id, report, task) {
  const question = task.questions[id];
  const classes = (task.classes[id] ?? []).map((name) => (question?.type === "score" ? `level ${name}` : name));
  const testId = `report-${versionNumber}-${id}`;
  return el(
    "section",
    { className: "task-question", attrs: { "data-testid": testId } },
    el("h3", {}, id, question ? el("span", { className: "hint" }, ` ${question.type}: ${question.instructions ?? ""}`) : null),
    el(
      "p",
      { attrs: { "data-testid": `${testId}-chosen` } },
      "Answered by ",
      el("strong", {}, headName(report.chosen)),
      `. Held-out figures from ${report.folds === 1 ? "no cross-validation (too few examples)" : `${report.folds}-fold cross-validation`} over ${count(report.examples)} examples.`,
    ),
    el(
      "div",
      { className: "task-report-grid" },
      el("div", {}, metricsTable(report, testId), classTable(report, classes, testId)),
      reliabilityDiagram({
        bins: report.reliability.bins,
        title: `Reliability of ${id}, ${headName(report.chosen)}, held-out`,
        ece: report[report.chosen]?.ece,
        testId: `${testId}-reliability`,
      }),
    ),
  );
}

function metricsTable(report, testId) {
  const rows = ["prior", "plain", "level1", "level2"].map((kind) => {
    const metrics = report[kind];
    const name = el("th", { attrs: { scope: "row" } }, HEAD_NAMES[kind], kind === report.chosen ? el("span", { className: "sub" }, "chosen") : null);
    if (!metrics) {
      const why = report.level2Omitted ? `not fitted: ${report.level2Omitted}` : "not fitted";
      return el("tr", { attrs: { "data-head": kind } }, name, el("td", { className: "text", attrs: { colspan: METRICS.length } }, why));
    }
    return el(
      "tr",
      { className: kind === report.chosen ? "chosen" : "", attrs: { "data-head": kind } },
      name,
      ...METRICS.map(([key]) => numberCell(figure(metrics[key]))),
    );
  });
  return el(
    "div",
    { className: "table-scroll" },
    el(
      "table",
      { className: "metrics", attrs: { "data-testid": `${testId}-metrics` } },
      el("caption", { className: "visually-hidden" }, "Held-out metrics per readout"),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", { attrs: { scope: "col" } }, "Readout"),
          ...METRICS.map(([, label]) => el("th", { className: "number", attrs: { scope: "col" } }, label)),
        ),
      ),
      el("tbody", {}, ...rows),
    ),
  );
}

function classTable(report, classes, testId) {
  const rows = report.perClass.map((n, i) => el("tr", {}, el("td", { className: "text" }, classes[i] ?? `class ${i}`), numberCell(n)));
  return el(
    "div",
    { className: "table-scroll" },
    el(
      "table",
      { className: "class-counts", attrs: { "data-testid": `${testId}-classes` } },
      el("thead", {}, el("tr", {}, el("th", { attrs: { scope: "col" } }, "Class"), el("th", { className: "number", attrs: { scope: "col" } }, "Examples"))),
      el("tbody", {}, ...rows),
    ),
  );
}
