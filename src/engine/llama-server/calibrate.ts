import { buildPrompt } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import type { RemotePrepared } from "../remote/prepare.js";
import { LiftMemory } from "./lifted-read.js";
import { readLabelLogProbsOnSlot, type SlotSession } from "./walk.js";

/**
 * One small judgment asked at start-up, whose reads teach the engine how deep the service's label
 * tokens (A–Z, Yes and No, 0–9) lie after a question on this model: then most of a request's
 * reads list their candidates the first time (one reading call per question). Its answers are
 * discarded.
 */
const QUESTIONS: Question[] = [
  {
    type: "choice",
    instructions: "Which letter comes first?",
    criteria: Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`option ${i}`, null])),
  },
  { type: "noul", instructions: "The state is short.", criteria: null },
  { type: "score", instructions: "How long is the state?", criteria: Array.from({ length: 10 }, (_, i) => `level ${i}`) },
];
const STATE = { note: "a start-up check of where the labels rank" };

export async function learnLabelDepths(
  prepare: (prompt: ReturnType<typeof buildPrompt>, signal?: AbortSignal) => Promise<RemotePrepared>,
  session: SlotSession,
  signal?: AbortSignal,
): Promise<LiftMemory> {
  const depths: number[] = [];
  const prepared = await prepare(buildPrompt(STATE, QUESTIONS), signal);
  await readLabelLogProbsOnSlot(prepared, { ...session, lifts: undefined, onDepths: (seen) => depths.push(...seen.values()) }, signal);
  const learnt = new LiftMemory();
  learnt.learn(depths);
  return learnt;
}
