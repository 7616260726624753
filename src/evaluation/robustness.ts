import { argmax } from "../judgment/confidence.js";
import { keyed } from "../judgment/keyed.js";
import type { Mulberry32 } from "../gguf/prng.js";
import { QUESTION_TYPES, type DatasetItem, type QuestionType } from "./dataset.js";

/**
 * Robustness checks: the same questions asked in a way that should not matter (options in
 * another order, other question ids, each question on its own), compared with the baseline
 * answers. A sound judge gives the same answer; the checks measure how far it is from that.
 * Every variant keeps the option keys, so answers are compared label by label.
 */

export type OrderMode = "shift" | "shuffle";

/** The option keys in a new order: shifted cyclically by one, or shuffled (never the same order). */
export function reorderedKeys(keys: readonly string[], mode: OrderMode, rng: Mulberry32): string[] {
  const shifted = [...keys.slice(1), keys[0]];
  if (mode === "shift") return shifted;
  const out = [...keys];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out.every((key, i) => key === keys[i]) ? shifted : out;
}

/** The item's questions with every choice question's options reordered; others unchanged. */
export function withOptionsReordered(item: DatasetItem, mode: OrderMode, rng: Mulberry32): Record<string, unknown> {
  const ids = Object.keys(item.questions);
  return keyed(
    ids,
    ids.map((id) => {
      const question = item.questions[id];
      if (question.type !== "choice") return question;
      const criteria = question.criteria as Record<string, unknown>;
      const keys = reorderedKeys(Object.keys(criteria), mode, rng);
      return {
        ...question,
        criteria: keyed(
          keys,
          keys.map((k) => criteria[k]),
        ),
      };
    }),
  );
}

/** The item's questions under neutral ids q1, q2, … (q1_ where the original already was q1). */
export function withRenamedIds(item: DatasetItem): { questions: Record<string, unknown>; renamed: Map<string, string> } {
  const ids = Object.keys(item.questions);
  const renamed = new Map(ids.map((id, i) => [id, `q${i + 1}` === id ? `q${i + 1}_` : `q${i + 1}`]));
  return {
    questions: keyed(
      [...renamed.values()],
      ids.map((id) => item.questions[id]),
    ),
    renamed,
  };
}

export interface Change {
  type: QuestionType;
  /** The most likely label differs (ties: first label, as in the metrics). */
  changed: boolean;
  /** Mean over labels of |p − p'|; for noul that is |noul − noul'|. */
  meanAbsChange: number;
  maxAbsChange: number;
}

export function compareDistributions(type: QuestionType, base: readonly number[], variant: readonly number[]): Change {
  const diffs = base.map((p, i) => Math.abs(p - variant[i]));
  return {
    type,
    changed: argmax([...base]) !== argmax([...variant]),
    meanAbsChange: diffs.reduce((a, b) => a + b, 0) / diffs.length,
    maxAbsChange: Math.max(...diffs),
  };
}

export interface SensitivitySummary {
  compared: number;
  /** Share of answers whose most likely label changed. */
  changedRate: number;
  meanAbsChange: number;
  maxAbsChange: number;
}

export type SensitivityByType = { overall?: SensitivitySummary } & Partial<Record<QuestionType, SensitivitySummary>>;

export function summariseChanges(changes: readonly Change[]): SensitivityByType {
  const summarise = (cs: readonly Change[]): SensitivitySummary | undefined =>
    cs.length === 0
      ? undefined
      : {
          compared: cs.length,
          changedRate: cs.filter((c) => c.changed).length / cs.length,
          meanAbsChange: cs.reduce((sum, c) => sum + c.meanAbsChange, 0) / cs.length,
          maxAbsChange: Math.max(...cs.map((c) => c.maxAbsChange)),
        };
  const out: SensitivityByType = { overall: summarise(changes) };
  for (const type of QUESTION_TYPES) {
    const summary = summarise(changes.filter((c) => c.type === type));
    if (summary) out[type] = summary;
  }
  return out;
}
