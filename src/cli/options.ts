import { parseEuros } from "../money/money.js";
import { CliError } from "./context.js";
import { formatMoney } from "../views/money.js";

/**
 * Parsers for option values that must be checked before anything is written. They run inside
 * actions and throw CliError (one line on stderr, exit code 1) rather than being commander
 * argParsers, whose errors come with a usage hint on a second line.
 */

export interface WholeNumberRange {
  min: number;
  max: number;
}

/** Digits only: "1e3", "1.5", "-1", "0x10" and "" are all refused, not coerced. */
export function parseWholeNumber(text: string, flag: string, range: WholeNumberRange): number {
  const trimmed = text.trim();
  const value = Number(trimmed);
  if (!/^\d+$/.test(trimmed) || !Number.isSafeInteger(value) || value < range.min || value > range.max) {
    throw new CliError(`${flag} must be a whole number from ${range.min} to ${range.max}, got ${JSON.stringify(text)}`);
  }
  return value;
}

export interface EurosRange {
  /** Smallest accepted amount, in micro-euros. */
  minMicro: number;
  maxMicro: number;
  /** Shown in the error, e.g. "12.50". */
  example: string;
}

/** A decimal euro amount (at most 6 decimals, no sign or exponent) → micro-euros, exactly. */
export function parseEurosOption(text: string, flag: string, range: EurosRange): number {
  const micros = parseEuros(text);
  if (micros === undefined || micros < range.minMicro || micros > range.maxMicro) {
    throw new CliError(
      `${flag} must be an amount of euros from ${formatMoney(range.minMicro)} to ${formatMoney(range.maxMicro)} ` +
        `with at most 6 decimals, e.g. ${range.example}; got ${JSON.stringify(text)}`,
    );
  }
  return micros;
}
