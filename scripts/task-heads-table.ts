/**
 * Task heads on the project's labelled sets, through the HTTP API only (issue 34; the page is
 * docs/measurements/2026-12-02-task-heads-grid.md). scripts/measure-task-heads.sh starts
 * the server and makes the key; this helper is the client.
 *
 *   npx tsx scripts/task-heads-table.ts measure --url <url> --key-file <file> --out <file.json>
 *       [--sizes 25,50,100,200,all] [--seeds 3] [--heads level1,level2] [--dev datasets/dev.jsonl]
 *       [--test datasets/test.jsonl] [--latency-offset 8] [--plain-pass yes|no] [--read-cache-mb 0]
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
 * definitions (src/evaluation/metrics.ts). With --read-cache-mb above 0 (the server's
 * JUDGE_READ_CACHE_MB) a read done once is not done again: the figures are the same bits, the
 * times are not the model's, so neither the fits' times nor the latency ratio are reported.
 */
import { readFile, writeFile } from "node:fs/promises";
import { mulberry32 } from "../src/bench/random.js";
import { parseDataset, requestOf, type DatasetItem } from "../src/evaluation/dataset.js";
import { isCorrect, negativeLogLikelihood, type Prediction } from "../src/evaluation/metrics.js";
import { answerProbabilities } from "../src/evaluation/read-answer.js";
import { table, type Config, type FitResult, type Kind, type PerQuestion, type Result, type Scores } from "./task-heads-report.js";

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
  /** The server's JUDGE_READ_CACHE_MB: with a cache, repeated reads take no model time, so no time is a model's. */
  const readCacheMb = Number(flag("read-cache-mb", "0"));
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

  const result: Result = {
    url,
    model: "",
    dev: devFile,
    test: testFile,
    testItems: test.length,
    configs: [],
    startedAt: new Date().toISOString(),
    seconds: 0,
    readCacheMb,
  };
  const save = async () => {
    result.seconds = (performance.now() - started) / 1000;
    await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
  };

  for (const size of sizes) {
    // "all" has one subset; its seeds differ in the folds the fit's cross-validation draws.
    for (let seed = 1; seed <= seeds; seed++) {
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
        if (withPlain) result.plain = scores(byQuestion(plainRaw));
        // With a read cache the task's request finds the plain request's read: no latency to compare.
        if (withPlain && readCacheMb === 0) {
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

if (args[0] === "measure") await measure();
else if (args[0] === "table") await table(args.slice(1));
else {
  console.error("usage: task-heads-table.ts measure --url <url> --key-file <file> --out <file.json> [...] | table <file.json>...");
  process.exit(2);
}
