import { IncomingMessage } from "node:http";
import type { Context } from "hono";

/**
 * Node's request beneath Hono's, when @hono/node-server serves (`app.request()` in tests has
 * none). Reading headers and the body from it directly spares every request a web `Request`,
 * its `Headers` and a web stream over the socket, which cost more CPU than the database did.
 */
export function nodeRequestOf(c: Context): IncomingMessage | undefined {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  return incoming instanceof IncomingMessage ? incoming : undefined;
}

/** A request header by its lower-case name, from Node's request when there is one. */
export function headerOf(c: Context, name: string): string | undefined {
  const incoming = nodeRequestOf(c);
  if (!incoming) return c.req.header(name);
  const value = incoming.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}
