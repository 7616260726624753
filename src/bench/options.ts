/** Parsers for `judge bench` option values; each throws a RangeError that names what it expected. */

/** "30s", "2m", "500ms", or a bare number of seconds → milliseconds. */
export function parseDuration(value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
  if (!match) throw new RangeError(`Expected a duration such as 30s, 2m or 500ms, got "${value}".`);
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? "s") as "ms" | "s" | "m" | "h"];
  const ms = Number(match[1]) * factor;
  if (!(ms > 0)) throw new RangeError("Expected a duration above zero.");
  return ms;
}

export function parseInteger(value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || n < min || n > max) {
    throw new RangeError(`Expected an integer from ${min}${max === Number.MAX_SAFE_INTEGER ? " up" : ` to ${max}`}, got "${value}".`);
  }
  return n;
}

/** "1,4,16": one phase per value, in the order given. */
export function parseConcurrencyList(value: string): number[] {
  const parts = value.split(",").map((part) => part.trim());
  if (parts.some((part) => part === "")) throw new RangeError(`Expected a comma-separated list of integers, got "${value}".`);
  return parts.map((part) => parseInteger(part, 1, 1024));
}
