/**
 * Seeded randomness and content hashing for the heads. Math.random is never used: a fit must be
 * the same for the same seed and rows on every machine and run.
 */

/** mulberry32: a small 32-bit generator, plenty for shuffling a few thousand rows. Returns [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = mix32(seed >>> 0) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seed derived from a parent seed and a path of small integers, so nested folds get independent streams. */
export function deriveSeed(seed: number, ...path: number[]): number {
  let h = mix32((seed >>> 0) ^ 0x9e3779b9);
  for (const step of path) h = mix32(h ^ Math.imul((step >>> 0) + 1, 0x85ebca6b));
  return h >>> 0;
}

/** Fisher–Yates, in place. */
export function shuffleInPlace<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = items[i];
    items[i] = items[j];
    items[j] = t;
  }
  return items;
}

/** murmur3's finaliser: spreads every input bit over the output. */
function mix32(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const bits = new DataView(new ArrayBuffer(8));

/**
 * A 64-bit (two 32-bit lanes) hash of a list of number arrays, over each value's float64 bits,
 * so a Float32Array and a number[] with the same values hash the same. Array lengths are mixed
 * in, so [[1], [2, 3]] and [[1, 2], [3]] differ.
 */
export function hashNumbers(arrays: readonly ArrayLike<number>[]): string {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  const feed = (word: number) => {
    a = Math.imul(a ^ word, 0x01000193);
    b = mix32(b ^ word ^ (a >>> 7));
  };
  for (const array of arrays) {
    feed(array.length);
    for (let i = 0; i < array.length; i++) {
      // Normalise -0 to 0 and every NaN to one pattern so equal-looking values hash equal.
      const v = array[i];
      bits.setFloat64(0, v === 0 ? 0 : Number.isNaN(v) ? Number.NaN : v);
      feed(bits.getUint32(0));
      feed(bits.getUint32(4));
    }
  }
  return (mix32(a) >>> 0).toString(16).padStart(8, "0") + (mix32(b ^ a) >>> 0).toString(16).padStart(8, "0");
}
