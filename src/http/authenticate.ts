import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors.js";
import type { AppEnv, Caller } from "./context.js";
import { headerOf } from "./incoming.js";

export interface KeyAuthenticator {
  /** Undefined for an unknown, malformed or revoked key. Asked on every request: revocation applies at once. */
  authenticate(plaintextKey: string): Promise<Caller | undefined>;
}

/** Bearer-key authentication; runs before anything reads the body. */
export function authenticate(keys: KeyAuthenticator): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = headerOf(c, "authorization");
    if (!header) throw new ApiError("missing_api_key", "missing API key: send Authorization: Bearer <key>");
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!match) throw new ApiError("invalid_api_key", "malformed Authorization header: expected Bearer <key>");
    const caller = await keys.authenticate(match[1]);
    if (!caller) throw new ApiError("invalid_api_key", "invalid or revoked API key");
    if (caller.expiredAt !== undefined) {
      throw new ApiError("key_expired", `this API key expired at ${new Date(caller.expiredAt).toISOString()}; ask for a new one`);
    }
    c.set("caller", caller);
    await next();
  };
}
