import type { MiddlewareHandler } from "hono";
import { randomBytesNow } from "../store/random.js";
import type { AppEnv } from "./context.js";

/**
 * Gives every response an id to quote to support. The ecosystem's SDKs read it from
 * `x-typesafe-request-id`, so it is sent under both names.
 */
export function requestId(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const id = `req_${randomBytesNow(12).toString("hex")}`;
    c.set("requestId", id);
    c.header("x-request-id", id);
    c.header("x-typesafe-request-id", id);
    await next();
  };
}
