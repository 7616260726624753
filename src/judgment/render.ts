import { keyed } from "./keyed.js";

/**
 * Renders state, instructions and descriptions to the text the model reads.
 * Structured values become JSON with keys sorted at every depth, so the same value always
 * gives the same text (and the same tokens) whatever order its keys arrived in.
 */
export function renderValue(value: unknown, numberTexts?: NumberTexts): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (!numberTexts || !holdsNumberTexts(value, numberTexts)) return JSON.stringify(sortKeys(value), null, 2);
  return renderJson(value, "", numberTexts);
}

/**
 * Numbers of a request as its JSON wrote them, where a JavaScript number would print them
 * otherwise (`1e999`, `9007199254740993`, a 30-digit id, `1.0`): container (the parsed object or
 * array itself) → key (an array's index as a string) → text. The HTTP body reader records them
 * (src/http/json-numbers.ts) and the request carries them (`JudgmentRequest.numberTexts`);
 * rendering prints them as written, so the model reads the numbers the client sent.
 */
export type NumberTexts = ReadonlyMap<object, ReadonlyMap<string, string>>;

function holdsNumberTexts(value: unknown, numberTexts: NumberTexts): boolean {
  if (numberTexts.size === 0) return false;
  const pending = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (item === null || typeof item !== "object") continue;
    if (numberTexts.has(item)) return true;
    for (const child of Object.values(item)) pending.push(child);
  }
  return false;
}

/** JSON.stringify(sortKeys(value), null, 2) for parsed JSON, with recorded number texts put back. */
function renderJson(value: unknown, indent: string, numberTexts: NumberTexts): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  const texts = numberTexts.get(value);
  const inner = `${indent}  `;
  const member = (key: string, item: unknown) => (typeof item === "number" && texts?.get(key)) || renderJson(item, inner, numberTexts);
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((item, i) => inner + member(String(i), item)).join(",\n")}\n${indent}]`;
  }
  const keys = Object.keys(value).sort();
  if (keys.length === 0) return "{}";
  const record = value as Record<string, unknown>;
  return `{\n${keys.map((key) => `${inner}${JSON.stringify(key)}: ${member(key, record[key])}`).join(",\n")}\n${indent}}`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return keyed(
      keys,
      keys.map((key) => sortKeys((value as Record<string, unknown>)[key])),
    );
  }
  return value;
}
