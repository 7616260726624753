/**
 * The result file of scripts/task-heads-table.ts measure, and its markdown tables (the `table`
 * command): one table per model, mean ± sd over seeds per size and head kind.
 */
import { readFile } from "node:fs/promises";

export type Kind = "level1" | "level2";
export interface Scores {
  n: number;
  accuracy: number;
  nll: number;
}
export type PerQuestion = Record<string, Scores>;
export interface FitResult {
  kind: Kind;
  fit: string;
  version: number;
  /** Server side: the fit's created_at to finished_at (the first example is read before the 202). */
  serverSeconds: number;
  /** Client side: from POST …/fits to seeing it succeeded (polled every second). */
  clientSeconds: number;
  examples: number;
  inputTokens: number;
  chargedEur: number;
  /** The head each question's version kept (the readout stays where no head beat it on held-out folds). */
  heads: Record<string, string>;
  /** The version's held-out k-fold figures on the training subset, per question and head. */
  report: Record<string, Record<string, { accuracy: number; nll: number } | string | number>>;
  test: PerQuestion;
  testSeconds: number;
}
export interface Config {
  size: number | "all";
  seed: number;
  task: string;
  items: number;
  perQuestion: Record<string, number>;
  prior: PerQuestion;
  fits: FitResult[];
}
export interface Result {
  url: string;
  model: string;
  dev: string;
  test: string;
  testItems: number;
  plain?: PerQuestion;
  latency?: { task: string; kind: Kind; pairs: number; plainMedianMs: number; taskMedianMs: number; ratioOfMedians: number; medianOfRatios: number };
  configs: Config[];
  /** A test pass under way: its first `done` items' figures. */
  partial?: { size: number | "all"; seed: number; kind: Kind; done: number; test: PerQuestion; plain?: PerQuestion };
  startedAt: string;
  seconds: number;
  /** The server's JUDGE_READ_CACHE_MB (0 or absent: none, every read ran the model). */
  readCacheMb?: number;
}

const meanSd = (values: number[]) => {
  if (values.length === 0) return "—";
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  if (values.length === 1) return mean.toFixed(3);
  const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1));
  return `${mean.toFixed(3)} ± ${sd.toFixed(3)}`;
};

export async function table(files: string[]): Promise<void> {
  // Runs of one model (a second run with --plain-pass no, say) are one table.
  const byModel = new Map<string, Result>();
  for (const file of files) {
    const run = JSON.parse(await readFile(file, "utf8")) as Result;
    const seen = byModel.get(run.model);
    if (!seen) byModel.set(run.model, run);
    else
      byModel.set(run.model, {
        ...seen,
        plain: seen.plain ?? run.plain,
        readCacheMb: Math.max(seen.readCacheMb ?? 0, run.readCacheMb ?? 0),
        latency: seen.latency ?? run.latency,
        configs: [...seen.configs, ...run.configs],
        seconds: seen.seconds + run.seconds,
      });
  }
  for (const r of byModel.values()) {
    const questions = Object.keys(r.plain ?? r.configs[0]?.prior ?? {});
    const sizes = [...new Set(r.configs.map((c) => c.size))];
    const kinds = [...new Set(r.configs.flatMap((c) => c.fits.map((f) => f.kind)))];
    console.log(`### ${r.model}\n`);
    console.log(`Test: ${r.test} (${r.testItems} items); training subsets from ${r.dev}; ${r.seconds.toFixed(0)} s of runs in all.\n`);
    console.log(
      `| Question | N/question | Seeds | Prior acc | Prior NLL | Plain acc | Plain NLL | ${kinds.map((k) => `${k} acc | ${k} NLL | ${k} head kept`).join(" | ")} |`,
    );
    console.log(`|---|---|---|---|---|---|---|${kinds.map(() => "---|---|---|").join("")}`);
    for (const q of questions) {
      for (const size of sizes) {
        const configs = r.configs.filter((c) => c.size === size && c.fits.length > 0);
        if (configs.length === 0) continue;
        const n = configs.map((c) => c.perQuestion[q] ?? 0);
        // One prior per seed: two runs of one size and seed sampled the same subset.
        const perSeed = [...new Map(configs.map((c) => [c.seed, c])).values()];
        const cells = [
          q,
          size === "all" ? `all (${n[0]})` : String(size),
          String(perSeed.length),
          meanSd(perSeed.map((c) => c.prior[q].accuracy)),
          meanSd(perSeed.map((c) => c.prior[q].nll)),
          r.plain?.[q] ? r.plain[q].accuracy.toFixed(3) : "—",
          r.plain?.[q] ? r.plain[q].nll.toFixed(3) : "—",
        ];
        for (const kind of kinds) {
          const fits = configs.map((c) => c.fits.find((f) => f.kind === kind)).filter((f): f is FitResult => f !== undefined);
          const kept = fits.map((f) => f.heads[q] ?? "none");
          cells.push(
            meanSd(fits.map((f) => f.test[q].accuracy)),
            meanSd(fits.map((f) => f.test[q].nll)),
            [...new Set(kept)].map((k) => `${k} ×${kept.filter((x) => x === k).length}`).join(", "),
          );
        }
        console.log(`| ${cells.join(" | ")} |`);
      }
    }
    console.log(`\nHeld-out k-fold figures of the fits' own reports (on the training subset, not test): accuracy / NLL\n`);
    console.log("| Question | N/question | Fit | Prior | Plain | level1 | level2 | Chosen |");
    console.log("|---|---|---|---|---|---|---|---|");
    for (const q of questions) {
      for (const size of sizes) {
        for (const kind of kinds) {
          const fits = r.configs.filter((c) => c.size === size).flatMap((c) => c.fits.filter((f) => f.kind === kind));
          if (fits.length === 0) continue;
          const cell = (head: string) => {
            const values = fits.map((f) => f.report[q]?.[head]).filter((v): v is { accuracy: number; nll: number } => typeof v === "object");
            return values.length ? `${meanSd(values.map((v) => v.accuracy))} / ${meanSd(values.map((v) => v.nll))}` : "—";
          };
          const chosen = fits.map((f) => String(f.report[q]?.chosen));
          console.log(
            `| ${q} | ${size} | ${kind} | ${cell("prior")} | ${cell("plain")} | ${cell("level1")} | ${cell("level2")} | ${[...new Set(chosen)].join(", ")} |`,
          );
        }
      }
    }
    const cached = (r.readCacheMb ?? 0) > 0;
    console.log(
      `\nFit cost (the plan's price: every example read and billed like a request)${cached ? "; the server kept reads (JUDGE_READ_CACHE_MB), so its times are not the model's and are left out" : ""}\n`,
    );
    console.log("| N/question | Fit | Examples | Wall time (server), mean | s per example | Input tokens | Charged (€) |");
    console.log("|---|---|---|---|---|---|---|");
    for (const size of sizes) {
      for (const kind of kinds) {
        const fits = r.configs.filter((c) => c.size === size).flatMap((c) => c.fits.filter((f) => f.kind === kind));
        if (fits.length === 0) continue;
        const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
        const seconds = mean(fits.map((f) => f.serverSeconds));
        const examples = mean(fits.map((f) => f.examples));
        console.log(
          `| ${size} | ${kind} | ${examples.toFixed(0)} | ${cached ? "—" : `${seconds.toFixed(0)} s`} | ${cached ? "—" : (seconds / examples).toFixed(2)} | ${mean(fits.map((f) => f.inputTokens)).toFixed(0)} | ${mean(fits.map((f) => f.chargedEur)).toFixed(6)} |`,
        );
      }
    }
    if (r.latency) {
      const l = r.latency;
      console.log(
        `\nLatency, one interleaved run over the ${l.pairs} test items at concurrency 1 (task ${l.task}, ${l.kind} fit): ` +
          `median without x_task ${l.plainMedianMs.toFixed(0)} ms, with ${l.taskMedianMs.toFixed(0)} ms: ratio of medians ${l.ratioOfMedians.toFixed(2)}, median of per-item ratios ${l.medianOfRatios.toFixed(2)}.\n`,
      );
    }
  }
}
