/**
 * What every client of POST /v1/systemone in this project (eval, calibrate, bench) needs to
 * agree on: where the endpoint is under a base address, and how long a 429 asks to wait.
 */

/** `base` is the server's base address; a path in it (behind a proxy) is kept. */
export function endpointUrl(base: string): URL {
  const url = new URL(base);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`not an http(s) URL: ${base}`);
  return new URL("v1/systemone", url.href.endsWith("/") ? url.href : `${url.href}/`);
}

/** Retry-After in milliseconds: seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
