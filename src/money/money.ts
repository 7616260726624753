/**
 * Money is an integer number of micro-euros everywhere (1 € = 1,000,000 µ€). Amounts are plain
 * JS numbers kept within the safe-integer range; anything that multiplies or divides goes
 * through BigInt, so no step on the money path is ever a floating-point operation.
 */
export const MICROS_PER_EURO = 1_000_000n;

/** Largest amount a balance or a top-up may reach: about €9 billion, inside 2^53 micro-euros. */
export const MAX_MICROS = Number.MAX_SAFE_INTEGER;

/** "12.5", "0.000001", "3" → micro-euros; undefined for anything else (signs, exponents, >6 decimals). */
export function parseEuros(text: string): number | undefined {
  const match = /^(\d{1,10})(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (!match) return undefined;
  const micros = BigInt(match[1]) * MICROS_PER_EURO + BigInt((match[2] ?? "").padEnd(6, "0"));
  return micros <= BigInt(MAX_MICROS) ? Number(micros) : undefined;
}

/**
 * Exact decimal euros: at least two decimals, at most six, trailing zeros trimmed
 * (4990000 → "4.99", 12345678 → "12.345678", 0 → "0.00").
 */
export function formatEuros(micros: number | bigint): string {
  // A bigint is a sum past 2^53 µ€ (a month's top-ups across accounts), exact as it is.
  if (typeof micros === "number") assertMicros(micros);
  const value = BigInt(micros);
  const sign = value < 0n ? "-" : "";
  const magnitude = value < 0n ? -value : value;
  const whole = magnitude / MICROS_PER_EURO;
  const fraction = (magnitude % MICROS_PER_EURO)
    .toString()
    .padStart(6, "0")
    .replace(/0{1,4}$/, "");
  return `${sign}${whole}.${fraction}`;
}

/**
 * The charge for reading `inputTokens` at `pricePerMillion` micro-euros per million tokens,
 * rounded up to a whole micro-euro: the service never bills a fraction it cannot represent,
 * and rounding up by less than one micro-euro per request cannot be gamed into free reading.
 */
export function chargeFor(inputTokens: number, pricePerMillion: number, multiplierMilli = 1000): number {
  assertMicros(inputTokens);
  assertMicros(pricePerMillion);
  assertMicros(multiplierMilli);
  // One rounding, of the exact product: tokens × price × (multiplier / 1000) / 1,000,000, up.
  const product = BigInt(inputTokens) * BigInt(pricePerMillion) * BigInt(multiplierMilli);
  const charge = (product + 999_999_999n) / 1_000_000_000n;
  if (charge > BigInt(MAX_MICROS)) throw new RangeError(`charge ${charge} µ€ is out of range`);
  return Number(charge);
}

/**
 * What `questions` count against a plan's allowance on a model priced at `multiplierMilli`
 * thousandths: questions × multiplier, rounded up to a whole question (2 questions at 0.25 → 1;
 * 1 question at 1.5 → 2), so no request is free and a multiplier of 1 counts questions as they are.
 */
export function allowanceUnits(questions: number, multiplierMilli = 1000): number {
  assertMicros(questions);
  assertMicros(multiplierMilli);
  return Number((BigInt(questions) * BigInt(multiplierMilli) + 999n) / 1000n);
}

/** Whole percent of an allowance used, rounded down so 100% means nothing is left. */
export function percentUsed(used: number, allowance: number): number {
  if (allowance <= 0) return 100;
  return Number((BigInt(Math.min(used, allowance)) * 100n) / BigInt(allowance));
}

function assertMicros(value: number): void {
  if (!Number.isSafeInteger(value)) throw new RangeError(`expected a safe integer, got ${value}`);
}
