import { randomFillSync } from "node:crypto";

/** Random bytes for ids: the store's, and the request ids the edge gives (a leaf both may import). */

const pool = Buffer.allocUnsafe(4096);
let used = pool.length;

/**
 * `n` bytes from the CSPRNG, drawn 4 KB at a time (one draw per id cost more than the id's
 * database row). The bytes are only valid until the next call: use them at once.
 */
export function randomBytesNow(n: number): Buffer {
  if (n > pool.length) return randomFillSync(Buffer.allocUnsafe(n));
  if (used + n > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += n;
  return pool.subarray(used - n, used);
}
