/**
 * Task heads on the project's labelled sets, through the HTTP API only (issue 34; the page is
 * docs/measurements/2026-12-02-task-heads-real-models.md). scripts/measure-task-heads.sh starts
 * the server and makes the key; this helper is the client.
 *
 *   npx tsx scripts/task-heads-table.ts measure --url <url> --key-file <file> --out <file.json>
 *       [--sizes 25,50,100,200,all] [--seeds 3] [--heads level1,level2] [--dev datasets/dev.jsonl]
 *       [--test datasets/test.jsonl] [--latency-offset 8] [--plain-pass yes|no]
 *   npx tsx scripts/task-heads-table.ts table <file.json>...     (markdown tables on stdout)
 *
 * measure: for each size N (examples per question; "all": the whole dev file) and seed, a seeded
 * subset of dev (an item counts for every question it labels, and is taken while none of those
 * has N yet), uploaded as a task (POST /v1/tasks, JSONL), then for each head kind one fit
 * (POST …/fits {heads: [kind], seed}, polled until it ends; the newest version answers) and one
 * pass over the test file with top-level `x_task`. The first configuration's pass also asks every
 * test item without `x_task`, interleaved with the task's requests (the plain request of item i
 * beside the task's request of item i − offset, so neither finds its state in the server's 4
 * cached slots): the plain readout's figures and the latency ratio come from that one run. The
 * prior is the training subset's label frequencies (one pseudo-count spread over the classes, as
 * the fit's report does), scored on the same test answers. Accuracy and NLL are `judge eval`'s
 * definitions (src/evaluation/metrics.ts).
 */
import { readFile, writeFile } from "node:fs/promises";
import { parseDataset, requestOf, type DatasetItem } from "../src/evaluation/dataset.js";
import { isCorrect, negativeLogLikelihood, type Prediction } from "../src/evaluation/metrics.js";
import { answerProbabilities } from "../src/evaluation/read-answer.js";

type Kind = "level1" | "level2";
interface Scores {
  n: number;
  accuracy: number;
  nll: number;
}
type PerQuestion = Record<string, Scores>;
interface FitResult {
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
interface Config {
  size: number | "all";
  seed: number;
  task: string;
  items: number;
  perQuestion: Record<string, number>;
  prior: PerQuestion;
  fits: FitResult[];
}
interface Result {
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
}

const args = process.argv.slice(2);
const flag = (name: string, fallback?: string) => {
  const i = args.indexOf(`--${name}`);
  if (i >= 0 && i + 1 < args.length) return args[i + 1];
  if (fallback === undefined) throw new Error(`--${name} is required`);
  return fallback;
};
const log = (text: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${text}\n`);

async function measure(): Promise<void> {
  const started = performance.now();
  const url = flag("url").replace(/\/$/, "");
  const key = (await readFile(flag("key-file"), "utf8")).trim();
  const sizes = flag("sizes", "25,50,100,200,all")
    .split(",")
    .map((s) => (s === "all" ? "all" : Number(s))) as (number | "all")[];
  const seeds = Number(flag("seeds", "3"));
  const kinds = flag("heads", "level1,level2").split(",") as Kind[];
  const devFile = flag("dev", "datasets/dev.jsonl");
  const testFile = flag("test", "datasets/test.jsonl");
  const offset = Number(flag("latency-offset", "8"));
  /** "no": skip the plain pass (and the latency), e.g. a second run beside one that had them. */
  const plainPass = flag("plain-pass", "yes") !== "no";
  const out = flag("out");

  const devText = await readFile(devFile, "utf8");
  const devLines = devText.split("\n");
  const dev = parseDataset(devText, devFile);
  const test = parseDataset(await readFile(testFile, "utf8"), testFile);

  const api = async (method: string, path: string, body?: string, type = "application/json") => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { "content-type": type }) },
      body,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
    return text === "" ? undefined : JSON.parse(text);
  };
  /** One judgment, timed by the client from sending to the whole body read. */
  const judge = async (item: DatasetItem, task?: string) => {
    const body = JSON.stringify({ ...requestOf(item), ...(task && { x_task: task }) });
    const t = performance.now();
    const response = await fetch(`${url}/v1/systemone`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body,
    });
    const text = await response.text();
    const ms = performance.now() - t;
    if (!response.ok) throw new Error(`item ${item.id}${task ? " with x_task" : ""}: ${response.status} ${text.slice(0, 300)}`);
    const reply = JSON.parse(text) as { model: string; answers: Record<string, unknown> };
    return {
      ms,
      reply,
      predictions: item.labelled.map((q) => ({
        q: q.id,
        p: { type: q.type, gold: q.gold, probabilities: answerProbabilities(q, reply.answers[q.id]) } as Prediction,
      })),
    };
  };

  const result: Result = { url, model: "", dev: devFile, test: testFile, testItems: test.length, configs: [], startedAt: new Date().toISOString(), seconds: 0 };
  const save = async () => {
    result.seconds = (performance.now() - started) / 1000;
    await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
  };

  for (const size of sizes) {
    for (let seed = 1; seed <= (size === "all" ? 1 : seeds); seed++) {
      const subset = sample(dev, size, seed);
      const perQuestion: Record<string, number> = {};
      for (const item of subset) for (const q of item.labelled) perQuestion[q.id] = (perQuestion[q.id] ?? 0) + 1;
      const name = `measure-${size}-${seed}-${Date.now().toString(36)}`;
      const jsonl = subset.map((item) => devLines[item.line - 1]).join("\n");
      const task = (await api("POST", `/v1/tasks?name=${encodeURIComponent(name)}`, jsonl, "application/jsonl")) as { id: string };
      log(
        `N=${size} seed ${seed}: task ${task.id}, ${subset.length} items (${Object.entries(perQuestion)
          .map(([q, n]) => `${q} ${n}`)
          .join(", ")})`,
      );
      const config: Config = { size, seed, task: task.id, items: subset.length, perQuestion, prior: scorePrior(subset, test), fits: [] };
      result.configs.push(config);
      for (const kind of kinds) {
        const t = performance.now();
        const started = (await api("POST", `/v1/tasks/${task.id}/fits`, JSON.stringify({ heads: [kind], seed }))) as { id: string };
        let fit: {
          state: string;
          examples: number;
          examples_read: number;
          input_tokens: number;
          charged_eur: string;
          version: number | null;
          error: unknown;
          created_at: string;
          finished_at: string | null;
        };
        for (;;) {
          fit = await api("GET", `/v1/tasks/${task.id}/fits/${started.id}`);
          if (fit.state !== "running") break;
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
        const clientSeconds = (performance.now() - t) / 1000;
        if (fit.state !== "succeeded") throw new Error(`fit ${started.id} ${fit.state}: ${JSON.stringify(fit.error)}`);
        const version = (await api("GET", `/v1/tasks/${task.id}/versions/${fit.version}`)) as {
          model: string;
          heads: Record<string, string>;
          report: { questions: Record<string, Record<string, unknown>> };
        };
        result.model = version.model;
        const report: FitResult["report"] = {};
        for (const [q, r] of Object.entries(version.report.questions)) {
          report[q] = {};
          for (const [k, v] of Object.entries(r)) {
            if (["prior", "plain", "level1", "level2"].includes(k) && v && typeof v === "object")
              report[q][k] = { accuracy: (v as Scores).accuracy, nll: (v as Scores).nll };
            else if (k === "chosen" || k === "examples") report[q][k] = v as string | number;
          }
        }
        log(
          `  fit ${kind}: ${fit.examples} examples in ${clientSeconds.toFixed(0)} s, ${fit.input_tokens} tokens, €${fit.charged_eur}; heads ${JSON.stringify(version.heads)}`,
        );

        // The test pass; the very first also asks every item plainly, interleaved, for the plain figures and the latency.
        const withPlain = plainPass && result.plain === undefined;
        const plainMs: number[] = [];
        const taskMs: number[] = [];
        const tt = performance.now();
        const byQuestion = (all: { q: string; p: Prediction }[][]) => {
          const grouped: Record<string, Prediction[]> = {};
          for (const answers of all) for (const { q, p } of answers) (grouped[q] ??= []).push(p);
          return grouped;
        };
        const taskRaw: { q: string; p: Prediction }[][] = [];
        const plainRaw: { q: string; p: Prediction }[][] = [];
        const lag = withPlain ? offset : 0;
        for (let i = 0; i < test.length + lag; i++) {
          if (withPlain && i < test.length) {
            const r = await judge(test[i]);
            plainRaw[i] = r.predictions;
            plainMs[i] = r.ms;
          }
          const j = i - lag;
          if (j >= 0) {
            const r = await judge(test[j], task.id);
            taskRaw[j] = r.predictions;
            taskMs[j] = r.ms;
            // Every 10 items, what the pass has so far: a run stopped early still leaves figures.
            if ((j + 1) % 10 === 0 && j + 1 < test.length) {
              result.partial = {
                size,
                seed,
                kind,
                done: j + 1,
                test: scores(byQuestion(taskRaw.slice(0, j + 1))),
                ...(withPlain && { plain: scores(byQuestion(plainRaw.slice(0, j + 1))) }),
              };
              await save();
              log(`  test pass: ${j + 1} of ${test.length} items`);
            }
          }
        }
        delete result.partial;
        const testSeconds = (performance.now() - tt) / 1000;
        if (withPlain) {
          result.plain = scores(byQuestion(plainRaw));
          const ratios = taskMs.map((ms, i) => ms / plainMs[i]);
          result.latency = {
            task: task.id,
            kind,
            pairs: test.length,
            plainMedianMs: median(plainMs),
            taskMedianMs: median(taskMs),
            ratioOfMedians: median(taskMs) / median(plainMs),
            medianOfRatios: median(ratios),
          };
          log(
            `  latency: plain ${median(plainMs).toFixed(0)} ms, x_task ${median(taskMs).toFixed(0)} ms (medians over ${test.length}), ratio ${result.latency.ratioOfMedians.toFixed(2)}`,
          );
        }
        const testScores = scores(byQuestion(taskRaw));
        log(
          `  test (${testSeconds.toFixed(0)} s): ${Object.entries(testScores)
            .map(([q, s]) => `${q} acc ${s.accuracy.toFixed(3)} nll ${s.nll.toFixed(3)}`)
            .join("; ")}`,
        );
        config.fits.push({
          kind,
          fit: started.id,
          version: fit.version!,
          serverSeconds: (Date.parse(fit.finished_at!) - Date.parse(fit.created_at)) / 1000,
          clientSeconds,
          examples: fit.examples,
          inputTokens: fit.input_tokens,
          chargedEur: Number(fit.charged_eur),
          heads: version.heads,
          report,
          test: testScores,
          testSeconds,
        });
        await save();
      }
    }
  }
  await save();
  log(`done in ${result.seconds.toFixed(0)} s: ${out}`);
}

/** Up to N examples per question, seeded: items in a shuffled order, each taken while every question it labels has fewer than N. */
function sample(items: readonly DatasetItem[], size: number | "all", seed: number): DatasetItem[] {
  if (size === "all") return [...items];
  const random = mulberry32(seed);
  const order = items.map((item) => ({ item, key: random() })).sort((a, b) => a.key - b.key);
  const counts = new Map<string, number>();
  const taken: DatasetItem[] = [];
  for (const { item } of order) {
    if (item.labelled.length === 0 || item.labelled.some((q) => (counts.get(q.id) ?? 0) >= size)) continue;
    for (const q of item.labelled) counts.set(q.id, (counts.get(q.id) ?? 0) + 1);
    taken.push(item);
  }
  return taken.sort((a, b) => a.line - b.line);
}

/** The training subset's label frequencies, one pseudo-count spread over the classes, as every test answer. */
function scorePrior(train: readonly DatasetItem[], test: readonly DatasetItem[]): PerQuestion {
  const frequencies = new Map<string, number[]>();
  for (const item of train) {
    for (const q of item.labelled) {
      const sum = frequencies.get(q.id) ?? q.gold.map(() => 0);
      q.gold.forEach((g, k) => (sum[k] += g));
      frequencies.set(q.id, sum);
    }
  }
  const grouped: Record<string, Prediction[]> = {};
  for (const item of test) {
    for (const q of item.labelled) {
      const counts = frequencies.get(q.id) ?? q.gold.map(() => 0);
      const total = counts.reduce((a, b) => a + b, 0) + 1;
      (grouped[q.id] ??= []).push({ type: q.type, gold: q.gold, probabilities: counts.map((c) => (c + 1 / counts.length) / total) });
    }
  }
  return scores(grouped);
}

function scores(grouped: Record<string, Prediction[]>): PerQuestion {
  return Object.fromEntries(
    Object.entries(grouped).map(([q, ps]) => [
      q,
      { n: ps.length, accuracy: ps.filter(isCorrect).length / ps.length, nll: ps.reduce((s, p) => s + negativeLogLikelihood(p), 0) / ps.length },
    ]),
  );
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- table ----

const meanSd = (values: number[]) => {
  if (values.length === 0) return "—";
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  if (values.length === 1) return mean.toFixed(3);
  const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1));
  return `${mean.toFixed(3)} ± ${sd.toFixed(3)}`;
};

async function table(files: string[]): Promise<void> {
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
    console.log(`\nFit cost (the plan's price: every example read and billed like a request)\n`);
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
          `| ${size} | ${kind} | ${examples.toFixed(0)} | ${seconds.toFixed(0)} s | ${(seconds / examples).toFixed(2)} | ${mean(fits.map((f) => f.inputTokens)).toFixed(0)} | ${mean(fits.map((f) => f.chargedEur)).toFixed(6)} |`,
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

if (args[0] === "measure") await measure();
else if (args[0] === "table") await table(args.slice(1));
else {
  console.error("usage: task-heads-table.ts measure --url <url> --key-file <file> --out <file.json> [...] | table <file.json>...");
  process.exit(2);
}
