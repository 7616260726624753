import { keyed } from "./keyed.js";

/**
 * Renders state, instructions and descriptions to the text the model reads.
 * Structured values become JSON with keys sorted at every depth, so the same value always
 * gives the same text (and the same tokens) whatever order its keys arrived in.
 */
export function renderValue(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(sortKeys(value), null, 2);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return keyed(keys, keys.map((key) => sortKeys((value as Record<string, unknown>)[key])));
  }
  return value;
}
