/** The benchmark's results: the JSON report (`--json`) and its table. */
import path from "node:path";
import type { Limit, LoadResult } from "./load.js";
import type { RateLimitCheck } from "./rate-limit.js";
import type { RequestShape } from "./requests.js";
import { median, ratio, saving, summarizeLatencies, throughput, type LatencySummary } from "./stats.js";

export interface PhaseSpec {
  concurrency: number;
  sameState: boolean;
  /** Set for the phase whose requests take this many states in turn (tenants interleaving states). */
  states?: number;
}

export interface PhaseReport extends PhaseSpec {
  /** Requests sent: answered + failed. */
  requests: number;
  answered: number;
  failed: number;
  /** The failures by kind, as the table's columns: they add up to `failed`. */
  failures: Failures;
  errors: Record<string, number>;
  errorSamples: string[];
  seconds: number;
  questions: number;
  inputTokens: number;
  meanInputTokens: number | null;
  requestsPerSecond: number;
  questionsPerSecond: number;
  inputTokensPerSecond: number;
  latencyMs: LatencySummary | null;
  /** Median raw reading speed of the samples taken just before and just after this phase. */
  ceilingTokensPerSecond: number | null;
  ratioToCeiling: number | null;
  clientCpuMsPerRequest: number | null;
  /** Client CPU time / wall time: near 1 would mean the client, not the server, is the limit. */
  clientCpuShare: number;
}

export interface Failures {
  "429": number;
  /** Other 4xx. */
  "4xx": number;
  "5xx": number;
  /** No response: refused, reset, timed out. */
  network: number;
  /** Any other answer that is not a usable 200: a 200 without usage.input_tokens, a redirect. */
  other: number;
}

export interface CeilingReport {
  modelPath: string;
  threads: number;
  tokensPerRead: number;
  reads: number;
  /** Median over every read. */
  tokensPerSecond: number;
  /** Tokens/s of each read, one list per sampling point (before, between and after the phases). */
  samples: number[][];
}

export interface BenchReport {
  url: string;
  model: string | null;
  settings: {
    shape: RequestShape;
    concurrency: number[];
    limit: Limit;
    warmup: number | "concurrency";
    seed: number;
    modelPath: string | null;
    ceilingReads: number;
    reuse: boolean;
    states: number | null;
  };
  state: { targetTokens: number; words: number; tokensPerWord: number; measuredBy: "tokenizer" | "server" };
  /** The key's limit from the first answer's headers, against a low estimate of the run's load; null when not sent. */
  rateLimit: RateLimitCheck | null;
  phases: PhaseReport[];
  ceiling: CeilingReport | null;
  ceilingNote: string | null;
  prefixReuse: {
    concurrency: number;
    newStateP50Ms: number | null;
    sameStateP50Ms: number | null;
    latencySaving: number | null;
    requestsPerSecondGain: number | null;
  } | null;
  /**
   * K interleaved states against new and repeated states at the same concurrency: near the
   * repeated state when the server keeps K states cached, near new states when it keeps one.
   */
  interleaved: {
    states: number;
    concurrency: number;
    p50Ms: number | null;
    newStateP50Ms: number | null;
    sameStateP50Ms: number | null;
    requestsPerSecond: number;
    requestsPerSecondGainOverNew: number | null;
    latencySavingOverNew: number | null;
  } | null;
}

export interface ReportInput {
  settings: {
    url: string;
    shape: RequestShape;
    concurrency: number[];
    limit: Limit;
    warmup?: number;
    seed: number;
    modelPath?: string;
    ceilingReads: number;
    reuse: boolean;
    states?: number;
  };
  model: string | undefined;
  calibration: { tokensPerWord: number; by: "tokenizer" | "server"; words: number };
  phases: { spec: PhaseSpec; result: LoadResult }[];
  rateLimit?: RateLimitCheck;
  ceiling?: { modelPath: string; threads: number; tokensPerRead: number; samples: number[][] };
}

export const NO_CEILING_NOTE = "no ceiling measured: pass --model <path.gguf>, the server's model file on this machine, to compare with raw prompt reading";

export function buildReport(input: ReportInput): BenchReport {
  const { settings } = input;
  const ceilingSpeeds = input.ceiling?.samples.map((reads) => reads.map((seconds) => input.ceiling!.tokensPerRead / seconds));
  const phases = input.phases.map(({ spec, result }, index) => {
    const adjacent = ceilingSpeeds ? median([...(ceilingSpeeds[index] ?? []), ...(ceilingSpeeds[index + 1] ?? [])]) : null;
    return phaseReport(spec, result, adjacent);
  });
  return {
    url: settings.url,
    model: input.model ?? null,
    settings: {
      shape: settings.shape,
      concurrency: settings.concurrency,
      limit: settings.limit,
      warmup: settings.warmup ?? "concurrency",
      seed: settings.seed,
      modelPath: settings.modelPath ?? null,
      ceilingReads: settings.ceilingReads,
      reuse: settings.reuse,
      states: settings.states ?? null,
    },
    state: {
      targetTokens: settings.shape.stateTokens,
      words: input.calibration.words,
      tokensPerWord: input.calibration.tokensPerWord,
      measuredBy: input.calibration.by,
    },
    rateLimit: input.rateLimit ?? null,
    phases,
    ceiling:
      input.ceiling && ceilingSpeeds
        ? {
            modelPath: input.ceiling.modelPath,
            threads: input.ceiling.threads,
            tokensPerRead: input.ceiling.tokensPerRead,
            reads: ceilingSpeeds.flat().length,
            tokensPerSecond: median(ceilingSpeeds.flat()) ?? 0,
            samples: ceilingSpeeds,
          }
        : null,
    ceilingNote: ceilingNote(input),
    prefixReuse: prefixReuse(phases),
    interleaved: interleaved(phases),
  };
}

export function phaseReport(spec: PhaseSpec, result: LoadResult, ceilingTokensPerSecond: number | null): PhaseReport {
  const seconds = result.elapsedMs / 1000;
  const rates = throughput({ answered: result.answered, questions: result.questions, inputTokens: result.inputTokens }, seconds);
  return {
    ...spec,
    requests: result.sent,
    answered: result.answered,
    failed: result.sent - result.answered,
    failures: failuresOf(result.errors),
    errors: result.errors,
    errorSamples: result.errorSamples,
    seconds,
    questions: result.questions,
    inputTokens: result.inputTokens,
    meanInputTokens: ratio(result.inputTokens, result.answered),
    ...rates,
    latencyMs: summarizeLatencies(result.latenciesMs),
    ceilingTokensPerSecond,
    ratioToCeiling: ratio(rates.inputTokensPerSecond, ceilingTokensPerSecond),
    clientCpuMsPerRequest: ratio(result.clientCpuMs, result.sent),
    clientCpuShare: result.clientCpuMs / result.elapsedMs,
  };
}

function failuresOf(errors: Record<string, number>): Failures {
  const failures: Failures = { "429": 0, "4xx": 0, "5xx": 0, network: 0, other: 0 };
  for (const [key, n] of Object.entries(errors)) {
    const kind = key === "429" || key === "network" ? key : /^4\d\d$/.test(key) ? "4xx" : /^5\d\d$/.test(key) ? "5xx" : "other";
    failures[kind] += n;
  }
  return failures;
}

/** Why there is no ceiling, or a warning when it may not be the server's model. */
function ceilingNote(input: ReportInput): string | null {
  if (!input.ceiling) return NO_CEILING_NOTE;
  const file = path.basename(input.ceiling.modelPath).replace(/\.gguf$/i, "");
  if (input.model === undefined || input.model === file) return null;
  return `the server answers as "${input.model}" but the ceiling read ${file}.gguf: make sure it is the same model`;
}

/** The same-state phase against the new-state phase at the same concurrency. */
function prefixReuse(phases: PhaseReport[]): BenchReport["prefixReuse"] {
  const same = phases.find((p) => p.sameState && !p.states);
  const fresh = same && phases.find((p) => !p.sameState && p.concurrency === same.concurrency);
  if (!same || !fresh) return null;
  const newStateP50Ms = fresh.latencyMs?.p50 ?? null;
  const sameStateP50Ms = same.latencyMs?.p50 ?? null;
  return {
    concurrency: same.concurrency,
    newStateP50Ms,
    sameStateP50Ms,
    latencySaving: saving(newStateP50Ms, sameStateP50Ms),
    requestsPerSecondGain: ratio(same.requestsPerSecond, fresh.requestsPerSecond),
  };
}

/** The interleaved-states phase against the new-state and same-state phases at its concurrency. */
function interleaved(phases: PhaseReport[]): BenchReport["interleaved"] {
  const rotating = phases.find((p) => p.states);
  if (!rotating) return null;
  const at = (sameState: boolean) => phases.find((p) => !p.states && p.sameState === sameState && p.concurrency === rotating.concurrency);
  const fresh = at(false);
  const p50Ms = rotating.latencyMs?.p50 ?? null;
  const newStateP50Ms = fresh?.latencyMs?.p50 ?? null;
  return {
    states: rotating.states!,
    concurrency: rotating.concurrency,
    p50Ms,
    newStateP50Ms,
    sameStateP50Ms: at(true)?.latencyMs?.p50 ?? null,
    requestsPerSecond: rotating.requestsPerSecond,
    requestsPerSecondGainOverNew: fresh ? ratio(rotating.requestsPerSecond, fresh.requestsPerSecond) : null,
    latencySavingOverNew: saving(newStateP50Ms, p50Ms),
  };
}
