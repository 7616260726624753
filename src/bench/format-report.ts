/** The human-readable benchmark report: one table row per phase, then what the rows mean. */
import path from "node:path";
import { formatTable } from "../views/text.js";
import type { BenchReport, Failures, PhaseReport } from "./report.js";

const FAILURE_COLUMNS: [keyof Failures, string][] = [
  ["429", "429"],
  ["4xx", "4XX"],
  ["5xx", "5XX"],
  ["network", "NETWORK"],
  ["other", "OTHER"],
];

/** Failure columns appear for the kinds that happened, so a run with failures shows them in its rows. */
export function formatReport(report: BenchReport): string {
  const kinds = FAILURE_COLUMNS.filter(([kind]) => report.phases.some((phase) => phase.failures[kind] > 0));
  const headers = [
    "STATE",
    "CONC",
    "REQUESTS",
    "FAILED",
    ...kinds.map(([, header]) => header),
    "REQ/S",
    "QUESTIONS/S",
    "INPUT TOK/S",
    "× CEILING",
    "P50 MS",
    "P95 MS",
    "P99 MS",
  ];
  const table = formatTable(
    headers,
    report.phases.map((phase) =>
      phaseRow(
        phase,
        kinds.map(([kind]) => kind),
      ),
    ),
  );
  return [table, "", ...notes(report)].join("\n");
}

function phaseRow(phase: PhaseReport, kinds: (keyof Failures)[]): string[] {
  return [
    stateColumn(phase),
    String(phase.concurrency),
    String(phase.requests),
    String(phase.failed),
    ...kinds.map((kind) => String(phase.failures[kind])),
    rate(phase.requestsPerSecond),
    rate(phase.questionsPerSecond),
    rate(phase.inputTokensPerSecond),
    phase.ratioToCeiling === null ? "-" : phase.ratioToCeiling.toFixed(2),
    ms(phase.latencyMs?.p50),
    ms(phase.latencyMs?.p95),
    ms(phase.latencyMs?.p99),
  ];
}

function notes(report: BenchReport): string[] {
  const { shape } = report.settings;
  const meanTokens = report.phases.find((p) => !p.sameState && p.meanInputTokens !== null)?.meanInputTokens;
  const { state } = report;
  const by = state.measuredBy === "tokenizer" ? "the model's tokenizer" : "the server's usage counts";
  const lines = [
    ...rateLimitLines(report),
    `server: ${report.url}, model ${report.model ?? "unknown (nothing answered)"}`,
    `requests: a ${state.targetTokens}-token state (${state.words} words at ${state.tokensPerWord.toFixed(2)} tokens/word, measured by ${by}), ` +
      `${plural(shape.questions, "question")}, ${plural(shape.options, "option")}; ` +
      `${meanTokens ? Math.round(meanTokens) : "-"} input tokens per request (usage.input_tokens)`,
    ceilingLine(report),
  ];
  const reuse = report.prefixReuse;
  if (reuse) {
    lines.push(
      `prefix reuse (concurrency ${reuse.concurrency}): p50 ${ms(reuse.sameStateP50Ms)} ms when the state repeats vs ${ms(reuse.newStateP50Ms)} ms ` +
        `when it is new: ${lessOrMore(reuse.latencySaving)}, ${reuse.requestsPerSecondGain?.toFixed(2) ?? "-"}× the requests/s`,
    );
  }
  if (report.interleaved) lines.push(interleavedLine(report.interleaved));
  lines.push(clientLine(report.phases));
  for (const phase of report.phases.filter((p) => p.failed > 0)) {
    const counts = Object.entries(phase.errors)
      .map(([status, n]) => `${status}×${n}`)
      .join(", ");
    lines.push(`failed (${stateColumn(phase)} state${phase.states ? "s" : ""}, concurrency ${phase.concurrency}): ${counts}; ${phase.errorSamples.join("; ")}`);
  }
  return lines;
}

function rateLimitLines({ rateLimit }: BenchReport): string[] {
  if (!rateLimit?.below) return [];
  return [
    `WARNING: rate limit of ${rateLimit.limit} requests per minute on this key, below the ${rateLimit.offeredPerMinute} or more ` +
      `this run sends in a minute: these figures measure the limit as much as the server`,
  ];
}

function stateColumn(phase: PhaseReport): string {
  if (phase.states) return `${phase.states} in turn`;
  return phase.sameState ? "same" : "new";
}

function interleavedLine(i: NonNullable<BenchReport["interleaved"]>): string {
  const against = [
    i.newStateP50Ms === null ? null : `${ms(i.newStateP50Ms)} ms for new states`,
    i.sameStateP50Ms === null ? null : `${ms(i.sameStateP50Ms)} ms for one repeated state`,
  ].filter((part) => part !== null);
  const gain = i.requestsPerSecondGainOverNew === null ? "" : `; ${i.requestsPerSecondGainOverNew.toFixed(2)}× the requests/s of new states`;
  return (
    `${i.states} interleaved states (concurrency ${i.concurrency}): p50 ${ms(i.p50Ms)} ms` +
    (against.length > 0 ? ` vs ${against.join(", ")}` : "") +
    gain +
    ` (${i.states} slots or more keep every state cached, e.g. JUDGE_SLOTS=${i.states}; one slot re-reads each)`
  );
}

function ceilingLine(report: BenchReport): string {
  const ceiling = report.ceiling;
  if (!ceiling) return report.ceilingNote ?? "";
  const warning = report.ceilingNote ? `\nwarning: ${report.ceilingNote}` : "";
  return (
    `ceiling: ${rate(ceiling.tokensPerSecond)} tokens/s, raw prompt reading of ${path.basename(ceiling.modelPath)} through node-llama-cpp ` +
    `(${ceiling.tokensPerRead} tokens per read, ${ceiling.threads} thread${ceiling.threads === 1 ? "" : "s"}; ` +
    `median of ${ceiling.reads} reads before, between and after the phases); ` +
    `× CEILING is each phase's input tok/s over the reads next to it${warning}`
  );
}

function clientLine(phases: PhaseReport[]): string {
  const busiest = phases.reduce((a, b) => (b.clientCpuShare > a.clientCpuShare ? b : a), phases[0]);
  if (!busiest) return "client: no phases";
  return (
    `client: ${busiest.clientCpuMsPerRequest?.toFixed(2) ?? "-"} ms CPU per request, ${percent(busiest.clientCpuShare)} of one core ` +
    `at its busiest (concurrency ${busiest.concurrency})`
  );
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** Three significant digits up to 100, whole numbers above; decided after rounding, so 99.996 prints as 100. */
function rate(value: number): string {
  if (Number(value.toFixed(1)) >= 100) return value.toFixed(0);
  return Number(value.toFixed(2)) >= 10 ? value.toFixed(1) : value.toFixed(2);
}

function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return "-";
  return Number(value.toFixed(1)) >= 100 ? value.toFixed(0) : value.toFixed(1);
}

/** "75% less", or "132% more" when the repeated state was the slower one (never "−132% less"). */
export function lessOrMore(saving: number | null): string {
  if (saving === null) return "-";
  return saving >= 0 ? `${percent(saving)} less` : `${percent(-saving)} more`;
}

function percent(value: number | null): string {
  return value === null ? "-" : `${Math.round(value * 100)}%`;
}
