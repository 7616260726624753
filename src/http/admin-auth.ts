import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.js";
import { routeNotFound } from "./not-found.js";

/**
 * Lets through only requests that carry `Authorization: Bearer <admin token>`. Every other
 * request (no header, an API key, a wrong token) gets the app's 404 for an unknown path, so
 * neither API keys nor scanners learn that the admin API exists.
 */
export function adminOnly(adminToken: string): MiddlewareHandler<AppEnv> {
  const expected = sha256(adminToken);
  return async (c, next) => {
    if (!presentsToken(c.req.header("authorization"), expected)) {
      return c.json(routeNotFound(c.req.method, c.req.path).body(), 404);
    }
    await next();
  };
}

function presentsToken(header: string | undefined, expected: Buffer): boolean {
  const match = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  // Comparing fixed-length digests keeps timingSafeEqual from throwing on a length mismatch and
  // makes the time taken independent of how much of the token a guess got right. The digest is
  // computed even without a header so that case takes no shorter path either.
  const equal = timingSafeEqual(sha256(match ? match[1] : ""), expected);
  return equal && match !== null;
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
