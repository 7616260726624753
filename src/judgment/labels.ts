/**
 * The labels the model answers with. Every label set is prefix-free (all labels of a set have
 * the same length), so the probability of a label is exactly the product of its tokens'
 * next-token probabilities, with no end-of-answer token to account for.
 */
const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** A..Z for up to 26 options; two letters AA, AB, … beyond that (26² covers 255). */
export function choiceLabels(count: number): string[] {
  if (count <= LETTERS.length) return [...LETTERS.slice(0, count)];
  return Array.from({ length: count }, (_, i) => LETTERS[Math.floor(i / 26)] + LETTERS[i % 26]);
}

/** Levels are numbered from 0, as the ecosystem's clients expect; at most 10 levels, so one digit each. */
export function scoreLabels(count: number): string[] {
  return Array.from({ length: count }, (_, i) => String(i));
}

/** Index 0 is "the statement holds". */
export const NOUL_LABELS = ["Yes", "No"] as const;
