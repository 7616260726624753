import type { MiddlewareHandler } from "hono";
import { randomBytesNow } from "../random-bytes.js";
import type { AppEnv } from "./context.js";

/** `req_` and 24 hex digits (96 random bits): every answer's id, the app's and the HTTP server's own refusals alike. */
export function newRequestId(): string {
  return `req_${randomBytesNow(12).toString("hex")}`;
}

/**
 * Gives every response an id to quote to support. The ecosystem's SDKs read it from
 * `x-typesafe-request-id`, so it is sent under both names.
 */
export function requestId(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const id = newRequestId();
    c.set("requestId", id);
    c.header("x-request-id", id);
    c.header("x-typesafe-request-id", id);
    await next();
  };
}
