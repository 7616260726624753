import { createHash } from "node:crypto";
import { createReadStream, statSync } from "node:fs";
import { buildAnswer, keyedLogits, NEUTRAL_TEMPERATURES } from "../../judgment/answers.js";
import { applyHead, confidence } from "../../judgment/heads/index.js";
import type { Head } from "../../judgment/heads/types.js";
import { promptStyleFor, type PromptStyle } from "../../judgment/prompt.js";
import type { Answer, Question } from "../../judgment/schema.js";
import type { JudgmentEngine } from "../../engine/types.js";

/**
 * A task's heads inside the judging flow (docs/concepts/tasks.md). The route resolves the task a
 * request names (`x_task`) into a TaskSelection; here each question of the request that is one of
 * the task's questions is answered through the head of the newest version bound to the model
 * answering, and every answer says which version answered it, or why none did.
 */

/** What a task's version is bound to: a changed model, weights file, prompt style or template never serves an old head. */
export interface ModelBinding {
  model: string;
  /** The weights file's SHA-256 for an in-process model; the server's engine and URL otherwise. */
  weights: string;
  promptStyle: string;
  template: string;
}

export interface TaskVersionHeads {
  version: number;
  binding: ModelBinding;
  /** By question id; a question no example labelled has none. */
  heads: Record<string, Head>;
}

export interface TaskSelection {
  id: string;
  name: string;
  questions: Record<string, Question>;
  abstainBelow: Record<string, number>;
  /** Newest first. */
  versions: readonly TaskVersionHeads[];
}

/** The `x_task` of one answer. */
export interface TaskNote {
  id: string;
  version: number | null;
  head?: Head["kind"];
  reason?: string;
}

/** Per question of the request: its head (and the task's question, whose option order the prompt uses), or why none. */
export type Planned = { question: Question; head: Head; floor?: number } | { reason: string };

export interface TaskPlan {
  selection: TaskSelection;
  version?: TaskVersionHeads;
  perQuestion: Planned[];
}

/** `readsFeatures`: whether the engine can read hidden states now; a level 2 head answers only where it can. */
export function planTask(
  selection: TaskSelection,
  binding: ModelBinding,
  ids: readonly string[],
  questions: readonly Question[],
  readsFeatures = true,
): TaskPlan {
  const version = selection.versions.find((v) => sameBinding(v.binding, binding));
  const why =
    selection.versions.length === 0 ? "the task has no fitted version yet" : `no version of the task was fitted on ${describeBinding(binding)}: fit it again`;
  const perQuestion = questions.map((question, i): Planned => {
    const own = selection.questions[ids[i]];
    if (!own || canonicalQuestion(own) !== canonicalQuestion(question))
      return { reason: "not one of the task's questions (id, type, instructions and criteria must be equal)" };
    if (!version) return { reason: why };
    const head = version.heads[ids[i]];
    if (!head) return { reason: "the task's examples label no answer of this question" };
    // The same weights behind an engine that lost its hidden-state reader (llama-server without its features server).
    if (head.kind === "level2" && !readsFeatures) return { reason: "its head is level 2 and this engine reads no hidden states now: answered plainly" };
    return { question: own, head, ...(selection.abstainBelow[ids[i]] !== undefined && { floor: selection.abstainBelow[ids[i]] }) };
  });
  return { selection, version, perQuestion };
}

/** The questions as the prompt shows them: a task's question in the task's option order, which its head was fitted on. */
export function promptQuestions(plan: TaskPlan | undefined, questions: readonly Question[]): Question[] {
  return questions.map((q, i) => {
    const planned = plan?.perQuestion[i];
    return planned && "head" in planned ? planned.question : q;
  });
}

export function needsFeatures(plan: TaskPlan | undefined): boolean {
  return plan?.perQuestion.some((p) => "head" in p && p.head.kind === "level2") ?? false;
}

/**
 * The answer to question `i`: through its head when it has one (no calibration temperature: the
 * head is the calibration), plainly otherwise, with `x_task` and, under the floor, `x_abstain`.
 */
export function taskAnswer(
  plan: TaskPlan,
  i: number,
  asked: Question,
  plain: Answer,
  logProbs: number[],
  features: Float32Array | undefined,
  withLogits: boolean,
): Answer {
  const planned = plan.perQuestion[i];
  const id = plan.selection.id;
  if (!("head" in planned)) return { ...plain, x_task: { id, version: null, reason: planned.reason } } as Answer;
  const note: TaskNote = { id, version: plan.version!.version, head: planned.head.kind };
  // A plain head keeps the answer given without the task, calibration included.
  const answer =
    planned.head.kind === "plain"
      ? plain
      : {
          ...buildAnswer(planned.question, applyHead(planned.head, logProbs, features).map(Math.log), NEUTRAL_TEMPERATURES),
          ...(withLogits && { logits: keyedLogits(planned.question, logProbs) }),
        };
  const abstain = planned.floor !== undefined && topProbability(answer) < planned.floor;
  return { ...inAskedOrder(asked, answer), x_task: note, ...(abstain && { x_abstain: true }) } as Answer;
}

/** The head's classes are in the task's option order; the answer keys a choice's options as the client sent them. */
function inAskedOrder(asked: Question, answer: Answer): Answer {
  if (asked.type !== "choice" || answer.type !== "choice") return answer;
  const keys = Object.keys(asked.criteria);
  const logits = (answer as { logits?: Record<string, number> }).logits;
  return { ...answer, probabilities: inOrder(keys, answer.probabilities), ...(logits && { logits: inOrder(keys, logits) }) } as Answer;
}

/** The top probability of an answer: what a question's abstention floor is compared with. */
function topProbability(answer: Answer): number {
  if (answer.type === "noul") return Math.max(answer.noul, 1 - answer.noul);
  return confidence(Object.values(answer.probabilities));
}

const inOrder = (keys: string[], values: Record<string, number>) => Object.fromEntries(keys.map((k) => [k, values[k]]));

/** What a binding needs of a model choice (request.ts ModelChoice has it). */
export interface BoundModel {
  id: string;
  engine: Pick<JudgmentEngine, "templateFamily">;
  source?: string;
}

/** The binding of the model answering now. The weights file is hashed once per path, size and modification time. */
export async function bindingOf(model: BoundModel, style: PromptStyle | "auto"): Promise<ModelBinding> {
  return {
    model: model.id,
    weights: await weightsOf(model.source),
    promptStyle: JSON.stringify(style === "auto" ? promptStyleFor(model.engine.templateFamily) : style),
    template: model.engine.templateFamily ?? "none",
  };
}

const hashes = new Map<string, Promise<string>>();

async function weightsOf(source: string | undefined): Promise<string> {
  if (!source?.startsWith("file:")) return source ?? "unknown";
  const path = source.slice("file:".length);
  let stamp: string;
  try {
    const stat = statSync(path);
    stamp = `${path} ${stat.size} ${stat.mtimeMs}`;
  } catch {
    return source;
  }
  let hash = hashes.get(stamp);
  if (!hash) {
    hash = new Promise<string>((resolve, reject) => {
      const digest = createHash("sha256");
      createReadStream(path)
        .on("data", (chunk) => digest.update(chunk))
        .on("end", () => resolve(`sha256:${digest.digest("hex")}`))
        .on("error", reject);
    });
    hashes.set(stamp, hash);
    hash.catch(() => hashes.delete(stamp));
  }
  return hash;
}

const sameBinding = (a: ModelBinding, b: ModelBinding) =>
  a.model === b.model && a.weights === b.weights && a.promptStyle === b.promptStyle && a.template === b.template;

const describeBinding = (b: ModelBinding) => `model ${b.model} (${b.weights.slice(0, 19)}, prompt ${b.promptStyle}, template ${b.template})`;

/** Object keys sorted, arrays in order: a choice's options may come in any order. */
export function canonicalQuestion(value: unknown): string {
  return JSON.stringify(value, (_, v) =>
    v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}
