/**
 * An object keyed exactly by `keys`, in order. Keys are defined, not assigned, because a plain
 * assignment to "__proto__" would change the object's prototype instead of adding the key, and
 * option names and question ids must come back byte-for-byte whatever they are.
 */
export function keyed<T>(keys: string[], values: T[]): Record<string, T> {
  const out: Record<string, T> = {};
  keys.forEach((key, i) => {
    Object.defineProperty(out, key, { value: values[i], enumerable: true, writable: true, configurable: true });
  });
  return out;
}
