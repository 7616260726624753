import { createHash, timingSafeEqual } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import type { AdminActor, AdminTokenRecord } from "../services/types.js";
import type { AppEnv } from "./context.js";
import { routeNotFound } from "./not-found.js";

/** The named admin tokens (`judge admins create`), looked up on every admin request: a revoked one fails at once. */
export interface AdminTokenAuthenticator {
  authenticate(plaintextToken: string): Promise<AdminTokenRecord | undefined>;
}

/**
 * Lets through only requests that carry `Authorization: Bearer <admin token>`: JUDGE_ADMIN_TOKEN
 * or an active named admin token. Every other request (no header, an API key, a wrong or revoked
 * token) gets the app's 404 for an unknown path, so neither API keys nor scanners learn that the
 * admin API exists. Who it is (for the audit log) is left on the context as `admin`.
 */
export function adminOnly(adminToken: string, tokens?: AdminTokenAuthenticator): MiddlewareHandler<AppEnv> {
  const expected = sha256(adminToken);
  return async (c, next) => {
    const presented = bearer(c.req.header("authorization"));
    const actor = await identify(presented, expected, tokens);
    if (!actor) return c.json(routeNotFound(c.req.method, c.req.path).body(), 404);
    c.set("admin", actor);
    await next();
  };
}

/** Who made this admin request; the admin routes run only behind adminOnly, which sets it. */
export function adminActor(c: Context<AppEnv>): AdminActor {
  const actor = c.get("admin");
  if (!actor) throw new Error("an admin route ran without adminOnly in front of it");
  return actor;
}

async function identify(presented: string | undefined, expected: Buffer, tokens?: AdminTokenAuthenticator): Promise<AdminActor | undefined> {
  // Comparing fixed-length digests keeps timingSafeEqual from throwing on a length mismatch and
  // makes the time taken independent of how much of the token a guess got right. The digest is
  // computed even without a header so that case takes no shorter path either.
  const equal = timingSafeEqual(sha256(presented ?? ""), expected);
  if (equal && presented !== undefined) return { kind: "env-token" };
  if (presented === undefined || !tokens) return undefined;
  // Named tokens are found by their SHA-256 through a unique index, as API keys are.
  const record = await tokens.authenticate(presented);
  return record && { kind: "admin-token", tokenId: record.id, name: record.name };
}

function bearer(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match ? match[1] : undefined;
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
