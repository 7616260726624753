import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors.js";
import type { AppEnv } from "./context.js";

/**
 * NUL (U+0000) is refused at the edge wherever a client can put it: PostgreSQL cannot store it
 * in text (it fails the whole statement, which would surface as a 500), SQLite truncates at it
 * in places, and no id, name, note or parameter of the API has a use for it. So the same
 * request gets the same 400 on either store, before it reaches any route.
 *
 * Node's HTTP parser already refuses a raw NUL in the request line and headers (400
 * malformed_request); what is left is the percent-encoded one in the path or query, and the
 * JSON escape `\u0000` in a body, which holdsNul below finds.
 */
export function refuseNulInUrl(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // The raw target, before any decoding: %00 is the only way a NUL gets into it.
    if (/%00|\0/.test(c.req.url)) {
      throw new ApiError("invalid_request", "the path or query string holds a NUL character (%00), which no id, name or parameter may contain");
    }
    await next();
  };
}

/** Whether a parsed JSON value holds U+0000 in any string, keys included; walked without recursion. */
export function holdsNul(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "string") {
      if (item.includes("\0")) return true;
    } else if (item !== null && typeof item === "object") {
      for (const [key, child] of Object.entries(item)) {
        if (key.includes("\0")) return true;
        pending.push(child);
      }
    }
  }
  return false;
}
