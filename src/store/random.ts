import { randomBytesNow } from "../random-bytes.js";

const BASE62_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// 248 is the largest multiple of 62 that fits in a byte. Bytes at or above it are discarded:
// reducing them modulo 62 too would make the first 8 characters 25% more likely than the rest.
const UNBIASED_BYTE_LIMIT = 256 - (256 % BASE62_ALPHABET.length);

/** A string of `length` independent, uniformly distributed base62 characters from the CSPRNG. */
export function randomBase62(length: number): string {
  if (!Number.isInteger(length) || length < 0) {
    throw new RangeError(`randomBase62 length must be a non-negative integer, got ${length}`);
  }
  let result = "";
  while (result.length < length) {
    // About 3% of bytes are rejected; a little slack usually finishes in one draw.
    const missing = length - result.length;
    for (const byte of randomBytesNow(missing + 8)) {
      if (byte >= UNBIASED_BYTE_LIMIT) continue;
      result += BASE62_ALPHABET[byte % BASE62_ALPHABET.length];
      if (result.length === length) break;
    }
  }
  return result;
}

/** Random id length: 16 base62 characters are ~95 bits, so ids never collide in practice. */
const ID_RANDOM_LENGTH = 16;

/** A prefixed public identifier such as `acct_…` or `key_…`; prefixes make ids self-describing. */
export function newId(prefix: "acct" | "key" | "plan" | "res" | "adm" | "task" | "fit"): string {
  return `${prefix}_${randomBase62(ID_RANDOM_LENGTH)}`;
}
