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
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      // defineProperty, because a plain assignment to "__proto__" would change the prototype.
      Object.defineProperty(sorted, key, {
        value: sortKeys((value as Record<string, unknown>)[key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return sorted;
  }
  return value;
}
