/**
 * Labelled datasets for `judge eval` and `judge calibrate`: JSON Lines, one item per line, in
 * the request shape (`state`, `questions`) plus `gold`, the expected answer per question id.
 *
 *   {"id": "t1", "state": "…", "questions": {"topic": {"type": "choice", …}}, "gold": {"topic": "billing"}}
 *
 * Gold answers are hard labels (option key, true/false, level index) or soft distributions
 * (choice: {option: p}; noul: P(true) as a number; score: [p0, p1, …] or {"0": p0, …}).
 * Everything is turned into one shape: a distribution over the question's labels, in order.
 */

import { plural } from "../judgment/plural.js";

export type QuestionType = "choice" | "noul" | "score";
export const QUESTION_TYPES: readonly QuestionType[] = ["choice", "noul", "score"];

/** One question of an item, with the labels its answer is read over and its gold distribution. */
export interface LabelledQuestion {
  id: string;
  type: QuestionType;
  /** choice: option keys in the given order; noul: "true", "false"; score: "0" … "n-1". */
  labels: string[];
  /** Gold probability of each label, in `labels` order; sums to 1. */
  gold: number[];
  /** True when the gold answer was given as a distribution rather than one label. */
  soft: boolean;
}

export interface DatasetItem {
  /** 1-based line in the file, for messages. */
  line: number;
  /** The item's `id`, or "line N" when it has none. */
  id: string;
  /** Undefined when the line has no `state` (the request then has none either). */
  state: unknown;
  /** The questions exactly as written, sent to the server unchanged. */
  questions: Record<string, Record<string, unknown>>;
  labelled: LabelledQuestion[];
}

export class DatasetError extends Error {
  constructor(
    message: string,
    readonly problems: string[],
  ) {
    super(message);
    this.name = "DatasetError";
  }
}

/** The request an item stands for, optionally with other questions (a variant of the item's). */
export function requestOf(item: DatasetItem, questions: Record<string, unknown> = item.questions): { state?: unknown; questions: Record<string, unknown> } {
  return item.state === undefined ? { questions } : { state: item.state, questions };
}

/** Soft gold distributions may be rounded (0.33, 0.33, 0.33); beyond this they are a mistake. */
const SUM_TOLERANCE = 1e-3;
const MAX_REPORTED_PROBLEMS = 20;

/** Parses and validates the whole file, reporting every problem with its line (up to 20). */
export function parseDataset(text: string, fileName: string): DatasetItem[] {
  const items: DatasetItem[] = [];
  const problems: string[] = [];
  const seenIds = new Map<string, number>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    const where = `${fileName}:${line}`;
    try {
      const item = parseItem(raw, line);
      const earlier = seenIds.get(item.id);
      if (earlier !== undefined) throw new LineError(`id "${item.id}" is already used on line ${earlier}`);
      seenIds.set(item.id, line);
      items.push(item);
    } catch (error) {
      if (!(error instanceof LineError)) throw error;
      problems.push(`${where}: ${error.message}`);
    }
  });
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_REPORTED_PROBLEMS);
    const more = problems.length > shown.length ? `\n… and ${problems.length - shown.length} more` : "";
    throw new DatasetError(`invalid dataset ${fileName}:\n${shown.join("\n")}${more}`, problems);
  }
  if (items.length === 0) throw new DatasetError(`dataset ${fileName} has no items`, [`${fileName}: no items`]);
  return items;
}

/** A problem with one line; the caller adds the file name and line number. */
class LineError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const show = (v: unknown) => JSON.stringify(v) ?? String(v);

function parseItem(raw: string, line: number): DatasetItem {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new LineError(`not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(value)) throw new LineError("each line must be a JSON object with questions and gold");
  if (value.id !== undefined && typeof value.id !== "string") throw new LineError("id must be a string");
  const id = typeof value.id === "string" ? value.id : `line ${line}`;
  if (!isObject(value.questions) || Object.keys(value.questions).length === 0) {
    throw new LineError("questions must be a non-empty object of question id to question");
  }
  if (!isObject(value.gold)) throw new LineError('gold must be an object of question id to gold answer, e.g. {"topic": "billing"}');
  const gold = value.gold;
  for (const key of Object.keys(gold)) {
    if (!Object.hasOwn(value.questions, key)) throw new LineError(`gold.${key}: there is no question ${show(key)}`);
  }
  const questions = value.questions as Record<string, unknown>;
  const labelled = Object.keys(questions).map((qid) => {
    if (!Object.hasOwn(gold, qid)) throw new LineError(`gold has no answer for question ${show(qid)}`);
    return labelQuestion(qid, questions[qid], gold[qid]);
  });
  return { line, id, state: value.state, questions: questions as DatasetItem["questions"], labelled };
}

function labelQuestion(id: string, question: unknown, gold: unknown): LabelledQuestion {
  const at = `questions.${id}`;
  if (!isObject(question)) throw new LineError(`${at} must be an object with type, instructions and criteria`);
  const type = question.type;
  if (type !== "choice" && type !== "noul" && type !== "score") {
    throw new LineError(`${at}.type must be one of "choice", "noul", "score" (got ${show(type)})`);
  }
  const labels = labelsOf(type, question.criteria, at);
  const parsed = parseGold(type, labels, gold, `gold.${id}`);
  return { id, type, labels, ...parsed };
}

function labelsOf(type: QuestionType, criteria: unknown, at: string): string[] {
  if (type === "noul") return ["true", "false"];
  if (type === "choice") {
    if (!isObject(criteria) || Object.keys(criteria).length < 2) {
      throw new LineError(`${at}.criteria must be an object with at least 2 options`);
    }
    return Object.keys(criteria);
  }
  if (!Array.isArray(criteria) || criteria.length < 2) throw new LineError(`${at}.criteria must be an array of at least 2 levels`);
  return criteria.map((_, i) => String(i));
}

function parseGold(type: QuestionType, labels: string[], gold: unknown, at: string): { gold: number[]; soft: boolean } {
  const oneHot = (index: number) => ({ gold: labels.map((_, i) => (i === index ? 1 : 0)), soft: false });
  switch (type) {
    case "choice":
      if (typeof gold === "string") {
        const index = labels.indexOf(gold);
        if (index < 0) throw new LineError(`${at}: ${show(gold)} is not an option (options: ${labels.join(", ")})`);
        return oneHot(index);
      }
      if (isObject(gold)) return { gold: distribution(labels, gold, at), soft: true };
      throw new LineError(`${at}: a choice gold answer is an option key or an object of option to probability`);
    case "noul":
      if (typeof gold === "boolean") return oneHot(gold ? 0 : 1);
      if (typeof gold === "number" && gold >= 0 && gold <= 1) return { gold: [gold, 1 - gold], soft: true };
      throw new LineError(`${at}: a noul gold answer is true, false, or the probability (0 to 1) that the statement holds`);
    case "score":
      if (typeof gold === "number" && Number.isInteger(gold) && gold >= 0 && gold < labels.length) return oneHot(gold);
      if (Array.isArray(gold)) {
        if (gold.length !== labels.length)
          throw new LineError(`${at}: ${plural(gold.length, "probability", "probabilities")} for ${plural(labels.length, "level")}`);
        return { gold: distribution(labels, Object.fromEntries(gold.map((p, i) => [String(i), p])), at), soft: true };
      }
      if (isObject(gold)) return { gold: distribution(labels, gold, at), soft: true };
      throw new LineError(`${at}: a score gold answer is a level index from 0 to ${labels.length - 1}, or a distribution over the levels`);
  }
}

/** A soft gold answer: labels it leaves out get 0; the sum may be off by rounding, then renormalised. */
function distribution(labels: string[], given: Record<string, unknown>, at: string): number[] {
  for (const key of Object.keys(given)) {
    if (!labels.includes(key)) throw new LineError(`${at}: ${show(key)} is not one of the labels (${labels.join(", ")})`);
  }
  const values = labels.map((label) => (Object.hasOwn(given, label) ? given[label] : 0));
  values.forEach((v, i) => {
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
      throw new LineError(`${at}.${labels[i]}: a probability must be a number ≥ 0 (got ${show(v)})`);
    }
  });
  const numbers = values as number[];
  const total = numbers.reduce((a, b) => a + b, 0);
  if (Math.abs(total - 1) > SUM_TOLERANCE) throw new LineError(`${at}: probabilities sum to ${total}, not 1`);
  return numbers.map((v) => v / total);
}
