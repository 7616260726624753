import { goldIndex, predictedIndex, type Prediction } from "./metrics.js";

/**
 * Confusion tables of choice answers: how often each true label was answered as each label.
 * Choice questions each have their own options, so answers are grouped by option set (the same
 * keys in any order make one table); a soft gold label counts as its most likely label, as in
 * accuracy, so the diagonal of every table sums to the answers counted right.
 */

export interface LabelledPrediction extends Prediction {
  question: string;
  labels: string[];
}

export interface ConfusionTable {
  /** The options, in the order first met in the dataset. */
  labels: string[];
  /** Question ids that use this option set, in order of first appearance. */
  questions: string[];
  answers: number;
  /** counts[true][predicted], indices into `labels`. */
  counts: number[][];
}

export interface Confusion {
  tables: ConfusionTable[];
  /** Option sets left out: beyond MAX_TABLES, or with more than MAX_LABELS options (unreadable as a grid). */
  omitted: { tables: number; answers: number };
}

export const MAX_TABLES = 12;
export const MAX_LABELS = 26;

export function confusionTables(records: readonly LabelledPrediction[]): Confusion {
  const byKey = new Map<string, ConfusionTable>();
  for (const r of records) {
    if (r.type !== "choice") continue;
    const key = JSON.stringify([...r.labels].sort());
    let table = byKey.get(key);
    if (!table) {
      table = { labels: [...r.labels], questions: [], answers: 0, counts: r.labels.map(() => r.labels.map(() => 0)) };
      byKey.set(key, table);
    }
    if (!table.questions.includes(r.question)) table.questions.push(r.question);
    // The record's labels may be in another order than the table's: count by key.
    const at = (index: number) => table.labels.indexOf(r.labels[index]);
    table.counts[at(goldIndex(r))][at(predictedIndex(r))]++;
    table.answers++;
  }
  // The most used option sets first; equal ones stay in dataset order (sort is stable).
  const all = [...byKey.values()].sort((a, b) => b.answers - a.answers);
  const readable = all.filter((t) => t.labels.length <= MAX_LABELS);
  const tables = readable.slice(0, MAX_TABLES);
  const left = all.filter((t) => !tables.includes(t));
  return { tables, omitted: { tables: left.length, answers: left.reduce((sum, t) => sum + t.answers, 0) } };
}
