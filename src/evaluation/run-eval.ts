import { Mulberry32 } from "../gguf/prng.js";
import type { DebiasMode } from "../judgment/debias.js";
import { keyed } from "../judgment/keyed.js";
import { confusionTables, type Confusion } from "./confusion.js";
import { labelErrors, requestExtras, sendAll, type JudgmentClient, type JudgmentReply, type LabelledRequest } from "./client.js";
import { requestOf, type DatasetItem, type LabelledQuestion } from "./dataset.js";
import { isCorrect, summariseByType, type Prediction, type SummaryByType } from "./metrics.js";
import { answerProbabilities } from "./read-answer.js";
import { qualityReport, type QualityReport } from "./quality.js";
import {
  compareDistributions,
  summariseChanges,
  withOptionsReordered,
  withRenamedIds,
  type Change,
  type OrderMode,
  type SensitivityByType,
} from "./robustness.js";

/**
 * `judge eval`: asks the server every item (plus the variants the robustness checks need),
 * then scores the answers. All requests are planned first, so a shuffled order depends only on
 * the seed, never on which reply came back first.
 */

export interface EvalChecks {
  order?: OrderMode;
  ids?: boolean;
  interference?: boolean;
}

export interface EvalRunOptions {
  items: readonly DatasetItem[];
  client: JudgmentClient;
  concurrency: number;
  errorRates: readonly number[];
  checks: EvalChecks;
  seed: number;
  /** Sent as the request's `model` when set. */
  model?: string;
  /** Sent as every request's `x_debias` when set (this server's option-order debiasing). */
  debias?: DebiasMode;
  /** Sent as every request's top-level `x_task` when set: the answers come through that task's fitted heads. */
  task?: string;
  /** Folds of the k-fold temperature scaling in the quality figures (default 5). */
  folds?: number;
  progress: (total: number) => { advance(): void; finish(): void };
}

/** One scored answer, as written to predictions.jsonl. */
export interface EvalRecord {
  item: string;
  line: number;
  question: string;
  type: LabelledQuestion["type"];
  labels: string[];
  gold: number[];
  probabilities: number[];
  correct: boolean;
}

export interface EvalResult {
  models: string[];
  items: number;
  /** The `x_debias` every request carried, when one was asked for. */
  debias?: DebiasMode;
  /** The `x_task` every request carried, when one was asked for. */
  task?: string;
  metrics: SummaryByType;
  /** Macro-F1, ECE on 10 bins, and the same figures for the prior baseline and after k-fold temperature scaling. */
  quality: QualityReport;
  /** Choice answers only: true label against predicted label, per option set. */
  confusion: Confusion;
  robustness: {
    optionOrder?: { mode: OrderMode } & SensitivityByType;
    questionIds?: SensitivityByType;
    interference?: SensitivityByType;
  };
  usage: { requests: number; input_tokens: number };
  records: EvalRecord[];
}

type CheckName = "order" | "ids" | "interference";
/** A baseline request has no check; a variant says which check it serves and how to compare. */
type Planned = LabelledRequest & {
  item: DatasetItem;
  check?: { name: CheckName; compare: (base: Map<string, number[]>, reply: JudgmentReply) => Change[] };
};

export async function runEvaluation(options: EvalRunOptions): Promise<EvalResult> {
  const planned = planRequests(options);
  const progress = options.progress(planned.length);
  const replies = await sendAll(options.client, planned, { concurrency: options.concurrency, progress });
  progress.finish();

  const records: EvalRecord[] = [];
  const baselines = new Map<DatasetItem, Map<string, number[]>>();
  const changes: Record<CheckName, Change[]> = { order: [], ids: [], interference: [] };
  planned.forEach((request, i) => {
    if (request.check) return;
    const { base, scored } = readBaseline(request, replies[i]);
    baselines.set(request.item, base);
    records.push(...scored);
  });
  planned.forEach(({ check, label, item }, i) => {
    if (check) changes[check.name].push(...labelErrors(label, () => check.compare(baselines.get(item)!, replies[i])));
  });

  const { checks } = options;
  return {
    models: [...new Set(replies.map((r) => r.model))],
    items: options.items.length,
    ...(options.debias && { debias: options.debias }),
    ...(options.task !== undefined && { task: options.task }),
    metrics: summariseByType(records.map(toPrediction), options.errorRates),
    quality: qualityReport(
      records.map((r) => ({ ...toPrediction(r), item: `${r.item}\u0000${r.line}`, question: r.question, labels: r.labels })),
      options.folds ?? 5,
      options.seed,
    ),
    confusion: confusionTables(records),
    robustness: {
      ...(checks.order && { optionOrder: { mode: checks.order, ...summariseChanges(changes.order) } }),
      ...(checks.ids && { questionIds: summariseChanges(changes.ids) }),
      ...(checks.interference && { interference: summariseChanges(changes.interference) }),
    },
    usage: { requests: replies.length, input_tokens: replies.reduce((sum, r) => sum + r.usage.input_tokens, 0) },
    records,
  };
}

const toPrediction = (r: EvalRecord): Prediction => ({ type: r.type, probabilities: r.probabilities, gold: r.gold });
const itemLabel = (item: DatasetItem) => `item ${item.id} (line ${item.line})`;

function readBaseline(request: Planned, reply: JudgmentReply): { base: Map<string, number[]>; scored: EvalRecord[] } {
  const { item } = request;
  const base = new Map<string, number[]>();
  const scored = item.labelled.map((q) => {
    const probabilities = labelErrors(request.label, () => answerProbabilities(q, reply.answers[q.id]));
    base.set(q.id, probabilities);
    const prediction: Prediction = { type: q.type, probabilities, gold: q.gold };
    const correct = isCorrect(prediction);
    return { item: item.id, line: item.line, question: q.id, type: q.type, labels: q.labels, gold: q.gold, probabilities, correct };
  });
  return { base, scored };
}

/** Reads `answerId` of the reply for question q and compares it with q's baseline answer. */
function changeOf(q: LabelledQuestion, base: Map<string, number[]>, reply: JudgmentReply, answerId = q.id): Change {
  return compareDistributions(q.type, base.get(q.id)!, answerProbabilities(q, reply.answers[answerId]));
}

function planRequests(options: EvalRunOptions): Planned[] {
  const rng = new Mulberry32(options.seed);
  const extra = requestExtras(options);
  const planned: Planned[] = [];
  for (const item of options.items) {
    const add = (questions: Record<string, unknown>, label: string, check?: Planned["check"]) =>
      planned.push({ body: { ...requestOf(item, questions), ...extra }, label, item, check });
    add(item.questions, itemLabel(item));
    const { order, ids, interference } = options.checks;
    const choices = item.labelled.filter((q) => q.type === "choice");
    if (order && choices.length > 0) {
      add(withOptionsReordered(item, order, rng), `${itemLabel(item)} with options reordered`, {
        name: "order",
        compare: (base, reply) => choices.map((q) => changeOf(q, base, reply)),
      });
    }
    if (ids) {
      const { questions, renamed } = withRenamedIds(item);
      add(questions, `${itemLabel(item)} with questions renamed`, {
        name: "ids",
        compare: (base, reply) => item.labelled.map((q) => changeOf(q, base, reply, renamed.get(q.id))),
      });
    }
    // An item with one question has nothing to interfere with: its baseline is already alone.
    if (interference && item.labelled.length > 1) {
      for (const q of item.labelled) {
        add(keyed([q.id], [item.questions[q.id]]), `${itemLabel(item)}, question ${JSON.stringify(q.id)} alone`, {
          name: "interference",
          compare: (base, reply) => [changeOf(q, base, reply)],
        });
      }
    }
  }
  return planned;
}
