import { randomUUID } from "node:crypto";

/**
 * JSON text in which a bigint is written as the exact integer literal it is. A sum of µ€ across
 * accounts may pass 2^53, where a JavaScript number would round and JSON.stringify refuses a
 * bigint; JSON itself has no such limit, and BigInt-aware parsers read the digits back exactly.
 */
export function exactJson(value: unknown): string {
  // Unguessable, so no string of the data can pass for a bigint.
  const marker = `bigint-${randomUUID()}:`;
  const text = JSON.stringify(value, (_, v: unknown) => (typeof v === "bigint" ? `${marker}${v}` : v));
  return text
    .split(`"${marker}`)
    .map((part, i) => (i === 0 ? part : part.replace(/^(-?\d+)"/, "$1")))
    .join("");
}

/** A number where one is exact; past 2^53 the bigint, which exactJson writes as its digits. */
export const asNumberIfExact = (value: bigint): number => (value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : (value as unknown as number));
