import { createHash } from "node:crypto";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/context.js";

/** The ETag header of a document route, for its own description (a 304 is plain HTTP caching, not listed). */
export const documentHeaders = {
  etag: { description: "The document's tag: send it back as If-None-Match to get 304 while it is unchanged.", schema: { type: "string" as const } },
};

type DocumentConfig = Parameters<OpenAPIHono<AppEnv>["getOpenAPI31Document"]>[0];

/**
 * Serves `app`'s OpenAPI 3.1 document at `path` from bytes built once. Generating it walks every
 * route's schemas (tens of ms of CPU for about 44 KB), and /openapi.json needs no key, so building
 * it per request let any client load the server at will. It is built at the first request, when
 * every route has been registered, and never changes after; its ETag lets a client that has it
 * revalidate with If-None-Match (304, no body).
 */
export function serveOpenApiDocument(app: OpenAPIHono<AppEnv>, path: string, config: DocumentConfig): void {
  let built: { bytes: Uint8Array<ArrayBuffer>; etag: string } | undefined;
  app.get(path, (c) => {
    built ??= build(app, config);
    if (matches(c.req.header("if-none-match"), built.etag)) return c.body(null, 304, { etag: built.etag });
    return c.body(built.bytes, 200, { "content-type": "application/json", etag: built.etag });
  });
}

function build(app: OpenAPIHono<AppEnv>, config: DocumentConfig): { bytes: Uint8Array<ArrayBuffer>; etag: string } {
  const bytes = new TextEncoder().encode(JSON.stringify(app.getOpenAPI31Document(config)));
  return { bytes, etag: `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"` };
}

/** If-None-Match as RFC 9110 compares it: `*`, or any listed tag, weak or not, equal to ours. */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed.replace(/^W\//, "") === etag;
  });
}
