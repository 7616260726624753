import type { JudgmentPrompt } from "../../judgment/prompt.js";

/**
 * Tolerant mode's start-up probe in process, as llama-server's (../llama-server/probe.ts): the
 * same request read with nothing cached (fresh); after a request whose state differs only in its
 * last sentence, so the slot reuses the common part and reads the rest from there (partly
 * cached: the batch shapes that move tolerant answers on real weights); with its whole prefix
 * cached; and, with two slots or more, while another slot reads a long prompt (beside others,
 * where node-llama-cpp packs both into shared batches). The figure is the largest difference in
 * any label's probability (renormalised over its question's labels), what `/health` reports as
 * `measured`; above the bound the engine refuses to serve. Strict mode needs none: its fixed shapes make a
 * cached read the same decodes as a fresh one (the exactness tests prove it).
 */
export interface ProbeReader {
  /** Label log-probabilities of every question of the prompt, read through the engine's slots. */
  read(prompt: JudgmentPrompt): Promise<number[][]>;
  slots: number;
}

const SYSTEM = "You are a careful, impartial judge. Answer with nothing but the requested label.";
const SHARED = Array.from({ length: 12 }, (_, i) => `Line ${i + 1} of the probe's state is the same in both of its states.`).join(" ");
const STATE = `State:\n${SHARED} The probe reads the same tokens fresh, partly cached, cached and beside other traffic.\n\n`;
const VARIANT = `State:\n${SHARED} This last sentence differs, so a slot holding this state keeps only the lines before it.\n\n`;

/** A choice of four and a yes/no question, each label one token: the probe reads each question's one trie node. */
export const PROBE_PROMPT: JudgmentPrompt = {
  system: SYSTEM,
  state: STATE,
  questions: [
    { text: "Question: Which word names a colour?\nOptions:\n1. red\n2. table\n3. seven\n4. quickly\nAnswer with the number of the best option.", labels: ["1", "2", "3", "4"] },
    { text: "Statement: The state mentions a probe.\nDoes the statement hold? Answer Yes or No.", labels: ["Yes", "No"] },
  ],
};

/** Another tenant's request: a long state on another slot, read at the same time. */
function otherTraffic(): JudgmentPrompt {
  const words = Array.from({ length: 600 }, (_, i) => `word${i % 97}`).join(" ");
  return { ...PROBE_PROMPT, state: `State:\n${words}\n\n`, questions: [PROBE_PROMPT.questions[1]] };
}

export async function measureTolerance(reader: ProbeReader): Promise<number> {
  const fresh = await reader.read(PROBE_PROMPT);
  await reader.read({ ...PROBE_PROMPT, state: VARIANT });
  const reads = [await reader.read(PROBE_PROMPT), await reader.read(PROBE_PROMPT)];
  if (reader.slots >= 2) reads.push((await Promise.all([reader.read(PROBE_PROMPT), reader.read(otherTraffic())]))[0]);
  let worst = 0;
  for (const other of reads) {
    fresh.forEach((question, q) => {
      const [a, b] = [renormalise(question), renormalise(other[q])];
      a.forEach((p, i) => (worst = Math.max(worst, Math.abs(p - b[i]))));
    });
  }
  return worst;
}

function renormalise(logProbs: number[]): number[] {
  const top = Math.max(...logProbs);
  const weights = logProbs.map((l) => Math.exp(l - top));
  const sum = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / sum);
}
