import { normalise } from "../../judgment/answers.js";
import { buildPrompt, type JudgmentPrompt } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";

/**
 * Tolerant mode's start-up probe in process, as llama-server's (../llama-server/probe.ts): the
 * same request read with nothing cached (fresh); after a request whose state differs only in its
 * last sentence, so the slot reuses the common part and reads the rest from there (partly
 * cached: the batch shapes that move tolerant answers on real weights); with its whole prefix
 * cached; and, with two slots or more, while another slot reads a long prompt (beside others,
 * where node-llama-cpp packs both into shared batches). The figure is the largest difference in
 * any label's probability (renormalised over its question's labels), what `/health` reports as
 * `measured`; above the bound the engine refuses to serve. Strict mode needs none: its fixed
 * shapes make a cached read the same decodes as a fresh one (the exactness tests prove it).
 */
export interface ProbeReader {
  /** Label log-probabilities of every question of the prompt, read through the engine's slots. */
  read(prompt: JudgmentPrompt): Promise<number[][]>;
  slots: number;
}

const SHARED = Array.from({ length: 12 }, (_, i) => `Line ${i + 1} of the probe's state is the same in both of its states.`).join(" ");
const STATE = `${SHARED} The probe reads the same tokens fresh, partly cached, cached and beside other traffic.`;
const VARIANT = `${SHARED} This last sentence differs, so a slot holding this state keeps only the lines before it.`;

/** A choice of four and a yes/no question, asked as the service asks them. */
const QUESTIONS: Question[] = [
  { type: "choice", instructions: "Which word names a colour?", criteria: { red: null, table: null, seven: null, quickly: null } },
  { type: "noul", instructions: "The state mentions a probe.", criteria: null },
];
export const PROBE_PROMPT: JudgmentPrompt = buildPrompt(STATE, QUESTIONS);

/** Another tenant's request: a long state on another slot, read at the same time. */
const OTHER_TRAFFIC: JudgmentPrompt = buildPrompt(Array.from({ length: 600 }, (_, i) => `word${i % 97}`).join(" "), [QUESTIONS[1]]);

export async function measureTolerance(reader: ProbeReader): Promise<number> {
  const fresh = await reader.read(PROBE_PROMPT);
  await reader.read(buildPrompt(VARIANT, QUESTIONS));
  const reads = [await reader.read(PROBE_PROMPT), await reader.read(PROBE_PROMPT)];
  if (reader.slots >= 2) reads.push((await Promise.all([reader.read(PROBE_PROMPT), reader.read(OTHER_TRAFFIC)]))[0]);
  let worst = 0;
  for (const other of reads) {
    fresh.forEach((question, q) => {
      const [a, b] = [normalise(question, 1), normalise(other[q], 1)];
      a.forEach((p, i) => (worst = Math.max(worst, Math.abs(p - b[i]))));
    });
  }
  return worst;
}
