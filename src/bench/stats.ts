/** The arithmetic of a benchmark report, kept apart so tests can check it on hand-computed cases. */

/**
 * Nearest-rank percentile: the smallest value with at least p% of the values at or below it,
 * i.e. sorted[ceil(p/100 · n) − 1]. It is always an observed latency (no interpolation), and
 * the p99 of fewer than 100 requests is simply the slowest one. `null` when there are none.
 */
export function percentile(sortedAscending: readonly number[], p: number): number | null {
  const n = sortedAscending.length;
  if (n === 0) return null;
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  const rank = Math.ceil((p / 100) * n);
  return sortedAscending[Math.min(n, Math.max(1, rank)) - 1];
}

export interface LatencySummary {
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

export function summarizeLatencies(latenciesMs: readonly number[]): LatencySummary | null {
  if (latenciesMs.length === 0) return null;
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const sum = sorted.reduce((total, x) => total + x, 0);
  return {
    p50: percentile(sorted, 50)!,
    p95: percentile(sorted, 95)!,
    p99: percentile(sorted, 99)!,
    mean: sum / sorted.length,
    min: sorted[0],
    max: sorted[sorted.length - 1],
  };
}

/** Median of an unsorted list (mean of the middle two for an even count); `null` when empty. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export interface Counts {
  /** Requests answered with 200: the only ones throughput counts. */
  answered: number;
  questions: number;
  inputTokens: number;
}

export interface Throughput {
  requestsPerSecond: number;
  questionsPerSecond: number;
  inputTokensPerSecond: number;
}

/** Per wall-clock second of the phase, from the first request sent to the last answer read. */
export function throughput(counts: Counts, seconds: number): Throughput {
  if (!(seconds > 0)) throw new RangeError(`a phase must last some time, got ${seconds} s`);
  return {
    requestsPerSecond: counts.answered / seconds,
    questionsPerSecond: counts.questions / seconds,
    inputTokensPerSecond: counts.inputTokens / seconds,
  };
}

/** a / b, or `null` when there is nothing to compare against. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined || b === null || b === undefined || !(b > 0)) return null;
  return a / b;
}

/** The share of `before` that `after` no longer costs: 0.7 when 100 ms became 30 ms. */
export function saving(before: number | null | undefined, after: number | null | undefined): number | null {
  const r = ratio(after, before);
  return r === null ? null : 1 - r;
}
