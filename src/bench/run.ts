/**
 * `judge bench` without the command line: probes the server, calibrates the state length,
 * runs one load phase per concurrency (plus a same-state phase for prefix reuse), and, given
 * the model file, measures the raw reading ceiling before, between and after the phases so
 * machine noise hits both sides of the ratio.
 */
import type { Token } from "node-llama-cpp";
import { createBenchClient, type BenchClient } from "./http-client.js";
import { runLoad, type Limit, type LoadResult, type Outcome, type Progress } from "./load.js";
import { deriveSeed, mulberry32 } from "./random.js";
import { checkRateLimit, describeRateLimit, type RateLimitCheck } from "./rate-limit.js";
import { median } from "./stats.js";
import { buildReport, type BenchReport, type PhaseSpec } from "./report.js";
import { createRequestGenerator, generateText, HEURISTIC_TOKENS_PER_WORD, measureTokensPerWord, wordsFor, type RequestShape } from "./requests.js";
import type { RawReader } from "./ceiling.js";

export interface BenchSettings {
  url: string;
  key: string;
  shape: RequestShape;
  concurrency: number[];
  limit: Limit;
  /** Unmeasured requests before each phase; by default one per concurrent client. */
  warmup?: number;
  seed: number;
  /** The server's model file, for the ceiling; without it no ceiling is measured. */
  modelPath?: string;
  threads: number;
  /** Raw reads per ceiling sample. */
  ceilingReads: number;
  /** Adds a phase that repeats one state, to show what the server's prefix cache saves. */
  reuse: boolean;
  /** Adds a phase whose requests take this many states in turn, to show how many states the server keeps cached. */
  states?: number;
  /** Runs even when the key's rate limit is below the load, instead of stopping before the phases. */
  allowRateLimit?: boolean;
}

export interface BenchHooks {
  log?: (line: string) => void;
  progressEveryMs?: number;
}

/** The server or the settings make the benchmark impossible: reported as one line. */
export class BenchError extends Error {}

const PROBE_RETRIES_AFTER_429 = 2;

/** Requests whose mean input tokens sets the length of a raw read. */
const CEILING_PROBES = 3;
/** The calibration's request, apart from the first probe's and the ceiling's. */
const CALIBRATION_VARIANT = 0x100;

export async function runBench(settings: BenchSettings, hooks: BenchHooks = {}): Promise<BenchReport> {
  const log = hooks.log ?? (() => undefined);
  const client = createBenchClient({ url: settings.url, key: settings.key, maxSockets: Math.max(...settings.concurrency) });
  let reader: RawReader | undefined;
  try {
    log(`probing ${settings.url}`);
    let rateLimit: RateLimitCheck | undefined;
    const first = await probe(client, settings, HEURISTIC_TOKENS_PER_WORD, {
      onFirstAnswer: (outcome) => {
        rateLimit = rateLimitFirst(outcome, settings, log);
      },
    });
    if (settings.modelPath) {
      const { openRawReader } = await import("./ceiling.js");
      log(`loading ${settings.modelPath} for the raw reading ceiling`);
      reader = await openRawReader(settings.modelPath, { threads: settings.threads });
    }
    const calibration = reader
      ? { tokensPerWord: measureTokensPerWord((text) => reader!.tokenize(text).length, settings.seed), by: "tokenizer" as const }
      : await calibrateWithServer(client, settings);
    const words = wordsFor(settings.shape.stateTokens, calibration.tokensPerWord);
    const by = calibration.by === "tokenizer" ? "the model's tokenizer" : "the server's usage counts";
    log(`state: ${settings.shape.stateTokens} tokens ≈ ${words} words (${calibration.tokensPerWord.toFixed(2)} tokens/word, measured by ${by})`);
    const ceiling = reader ? await ceilingSampler(reader, client, settings, calibration.tokensPerWord, log) : undefined;
    const phases = await runPhases(client, settings, calibration.tokensPerWord, ceiling, hooks);
    return buildReport({
      settings,
      model: phases.find((p) => p.result.model)?.result.model ?? first.model,
      calibration: { ...calibration, words },
      phases,
      rateLimit,
      ceiling:
        reader && ceiling
          ? { modelPath: reader.modelPath, threads: reader.threads, tokensPerRead: ceiling.tokens.length, samples: ceiling.samples }
          : undefined,
    });
  } finally {
    client.close();
    await reader?.close();
  }
}

/** Checks the key's rate limit against the run's load on the first answer, before any retry waits for it. */
function rateLimitFirst(outcome: Outcome, settings: BenchSettings, log: (line: string) => void): RateLimitCheck | undefined {
  if (!outcome.rateLimit) return undefined;
  const probes = 1 + (settings.modelPath ? CEILING_PROBES : 2);
  const phases = phaseSpecs(settings).map((spec) => ({ concurrency: spec.concurrency, warmup: warmupOf(settings, spec) }));
  const check = checkRateLimit(outcome.rateLimit, { probes, phases, limit: settings.limit }, outcome.latencyMs);
  if (check.below && !settings.allowRateLimit) throw new BenchError(describeRateLimit(check, false));
  log(
    check.below
      ? describeRateLimit(check, true)
      : `rate limit: ${check.limit} requests per minute on this key, above the ${check.offeredPerMinute} or more this run sends in a minute`,
  );
  return check;
}

interface ProbeOptions {
  /** The state left empty: the same questions, so only the state's tokens differ. */
  emptyState?: boolean;
  /** Picks the generated request: the same variant, the same state and questions. */
  variant?: number;
  /** The questions asked; the run's shape unless given. */
  shape?: RequestShape;
  onFirstAnswer?: (outcome: Outcome) => void;
}

/** One request outside any phase: fails fast, with the server's reason, when nothing can work. */
async function probe(
  client: BenchClient,
  settings: BenchSettings,
  tokensPerWord: number,
  { emptyState = false, variant = 0, shape = settings.shape, onFirstAnswer }: ProbeOptions = {},
) {
  const request = createRequestGenerator(shape, { seed: deriveSeed(settings.seed, 0x9b0b + variant), tokensPerWord })();
  if (emptyState) request.body = JSON.stringify({ ...JSON.parse(request.body), state: "" });
  let outcome = await client.send(request);
  onFirstAnswer?.(outcome);
  for (let retry = 0; outcome.status === 429 && retry < PROBE_RETRIES_AFTER_429; retry++) {
    await new Promise((resolve) => setTimeout(resolve, outcome.retryAfterMs));
    outcome = await client.send(request);
  }
  if (outcome.status === 200 && outcome.error === undefined) return outcome;
  const reason = outcome.status === 0 ? `could not be reached (${outcome.error})` : `answered ${outcome.status} (${outcome.error})`;
  throw new BenchError(`the server at ${settings.url} ${reason}`);
}

/**
 * Tokens per word from the server's own counts: one question with and without the state. One
 * question, because a server may count the state once per question (vLLM's own /v1/systemone
 * reads a prompt per question and bills each); calibrated on the whole request, its states
 * would come out a third as long at three questions, and its latency would not compare with a
 * server that counts the state once.
 */
async function calibrateWithServer(client: BenchClient, settings: BenchSettings) {
  const oneQuestion = { ...settings.shape, questions: 1 };
  const withState = await probe(client, settings, HEURISTIC_TOKENS_PER_WORD, { variant: CALIBRATION_VARIANT, shape: oneQuestion });
  const without = await probe(client, settings, HEURISTIC_TOKENS_PER_WORD, { variant: CALIBRATION_VARIANT, shape: oneQuestion, emptyState: true });
  const words = wordsFor(settings.shape.stateTokens, HEURISTIC_TOKENS_PER_WORD);
  const measured = (withState.inputTokens - without.inputTokens) / words;
  return { tokensPerWord: measured > 0 ? measured : HEURISTIC_TOKENS_PER_WORD, by: "server" as const };
}

interface CeilingSampler {
  tokens: Token[];
  /** Seconds of each read, one list per sampling point. */
  samples: number[][];
  sample(): Promise<void>;
}

/** Reads as many tokens as a benchmark request makes the server read (usage.input_tokens, over a few). */
async function ceilingSampler(
  reader: RawReader,
  client: BenchClient,
  settings: BenchSettings,
  tokensPerWord: number,
  log: (line: string) => void,
): Promise<CeilingSampler> {
  let total = 0;
  for (let i = 0; i < CEILING_PROBES; i++) total += (await probe(client, settings, tokensPerWord, { variant: i })).inputTokens;
  const target = Math.round(total / CEILING_PROBES);
  const random = mulberry32(deriveSeed(settings.seed, 0xce11));
  let tokens: Token[] = [];
  while (tokens.length < target) tokens = reader.tokenize(generateText(random, Math.ceil((2 * target) / tokensPerWord)));
  tokens = tokens.slice(0, target);
  // Unrecorded: the first full-length read runs on cold caches.
  await reader.readSeconds(tokens);
  const samples: number[][] = [];
  return {
    tokens,
    samples,
    async sample() {
      const reads: number[] = [];
      for (let i = 0; i < settings.ceilingReads; i++) reads.push(await reader.readSeconds(tokens));
      samples.push(reads);
      log(`  ceiling: ${Math.round(tokens.length / median(reads)!)} tokens/s (raw read of ${tokens.length} tokens, median of ${reads.length})`);
    },
  };
}

async function runPhases(client: BenchClient, settings: BenchSettings, tokensPerWord: number, ceiling: CeilingSampler | undefined, hooks: BenchHooks) {
  const log = hooks.log ?? (() => undefined);
  const specs = phaseSpecs(settings);
  const phases: { spec: PhaseSpec; result: LoadResult }[] = [];
  for (const [index, spec] of specs.entries()) {
    const next = createRequestGenerator(settings.shape, {
      seed: deriveSeed(settings.seed, index + 1),
      tokensPerWord,
      sameState: spec.sameState,
      states: spec.states,
    });
    const warmup = warmupOf(settings, spec);
    if (warmup > 0) await runLoad({ send: client.send, next, concurrency: Math.min(spec.concurrency, warmup), limit: { requests: warmup } });
    await ceiling?.sample();
    const state = spec.states ? `${spec.states} states in turn` : spec.sameState ? "the same state every request" : "a new state every request";
    log(`phase ${index + 1}/${specs.length}: ${state}, concurrency ${spec.concurrency}, ${describeLimit(settings.limit)}`);
    const result = await runLoad({
      send: client.send,
      next,
      concurrency: spec.concurrency,
      limit: settings.limit,
      onProgress: (progress) => log(describeProgress(progress)),
      progressEveryMs: hooks.progressEveryMs,
    });
    phases.push({ spec, result });
    log(describeProgress({ ...result, failed: result.sent - result.answered }, "  done after"));
  }
  await ceiling?.sample();
  return phases;
}

function phaseSpecs(settings: BenchSettings): PhaseSpec[] {
  const specs: PhaseSpec[] = settings.concurrency.map((concurrency) => ({ concurrency, sameState: false }));
  if (settings.reuse) specs.push({ concurrency: settings.concurrency[0], sameState: true });
  if (settings.states) specs.push({ concurrency: settings.concurrency[0], sameState: false, states: settings.states });
  return specs;
}

/** By default the interleaved phase first reads each of its states once: it measures a warm cache. */
function warmupOf(settings: BenchSettings, spec: PhaseSpec): number {
  return settings.warmup ?? Math.max(spec.concurrency, spec.states ?? 0);
}

function describeLimit(limit: Limit): string {
  return "requests" in limit ? `${limit.requests} requests` : `${limit.durationMs / 1000} s`;
}

function describeProgress(progress: Progress, label = "  after"): string {
  const seconds = progress.elapsedMs / 1000;
  return `${label} ${seconds.toFixed(1)} s: ${progress.answered} answered (${(progress.answered / seconds).toFixed(1)}/s), ${progress.failed} failed`;
}
