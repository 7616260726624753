import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { ApiError } from "../errors.js";
import { headerOf, nodeRequestOf } from "./incoming.js";
import type { NumberTexts } from "../judgment/render.js";
import { withNumberTexts } from "./json-numbers.js";
import { holdsNul } from "./nul-bytes.js";

/** The spec's limit on a request body: 256 KB. */
export const MAX_BODY_BYTES = 256 * 1024;

/**
 * How deeply a body may nest objects and arrays. 256 KB of brackets parses fine (V8's JSON
 * parser does not recurse) but would overflow the stack of everything that walks the value
 * afterwards; no real state needs more than a few levels.
 */
export const MAX_JSON_DEPTH = 64;

export interface JsonBody {
  value: unknown;
  /** The numbers JSON.parse would change, as the client wrote them: the request carries them to the prompt. */
  numberTexts?: NumberTexts;
  /** SHA-256 of the body's bytes: what an Idempotency-Key's "same body" compares. */
  digest: string;
}

/**
 * Reads a JSON body, refusing it as soon as it passes `maxBytes`: at once from Content-Length,
 * and while streaming for chunked bodies, so an oversized body is never held in memory.
 */
export async function readJsonBody(c: Context, maxBytes = MAX_BODY_BYTES): Promise<JsonBody> {
  const bytes = await readBodyBytes(c, maxBytes);
  // Hashed only when asked (a request with an Idempotency-Key): most requests never need it.
  return {
    ...parseJson(bytes),
    get digest() {
      return createHash("sha256").update(bytes).digest("hex");
    },
  };
}

/** The body's bytes, refused past `maxBytes` in the same way (413 body_too_large, never buffered beyond it). */
export async function readBodyBytes(c: Context, maxBytes: number): Promise<Uint8Array> {
  refuseEncoded(headerOf(c, "content-encoding"));
  const declared = Number(headerOf(c, "content-length") ?? Number.NaN);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const incoming = nodeRequestOf(c);
  return incoming ? await readNodeBody(incoming, maxBytes) : await readAtMost(c.req.raw, maxBytes);
}

/**
 * A compressed body would otherwise fail as "not valid UTF-8", which sends the client looking in
 * the wrong place. Only identity is read; RFC 9110 says to answer 415 with Accept-Encoding.
 */
function refuseEncoded(encoding: string | undefined): void {
  if (encoding === undefined) return;
  const codings = encoding.split(",").map((coding) => coding.trim().toLowerCase());
  if (codings.every((coding) => coding === "identity" || coding === "")) return;
  throw new ApiError(
    "unsupported_content_encoding",
    `Content-Encoding ${JSON.stringify(encoding.slice(0, 100))} is not supported; send the body uncompressed (identity)`,
    { "accept-encoding": "identity" },
  );
}

/** The body's bytes as JSON, every number beside the text it was written as (json-numbers.ts). */
export function parseJson(bytes: Uint8Array): { value: unknown; numberTexts?: NumberTexts } {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError("invalid_json", "the request body is not valid UTF-8");
  }
  if (text.trim() === "") throw new ApiError("invalid_json", "the request body is empty; send a JSON object");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ApiError("invalid_json", `the request body is not valid JSON: ${(error as Error).message}`);
  }
  if (nestingDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new ApiError("invalid_request", `the request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`);
  }
  if (holdsNul(value)) throw new ApiError("invalid_request", "the request body holds a NUL character (\\u0000) in a string; no field may contain it");
  return withNumberTexts(text, value);
}

/** Depth of nested objects/arrays, counted without recursion; stops once past `limit`. */
export function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== "object") continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > limit) return deepest;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** The same as readAtMost, on Node's request stream. */
function readNodeBody(incoming: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (settle: () => void) => {
      incoming.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      settle();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      // The rest is left unread; the server drains (or closes) the connection after the 413.
      incoming.pause();
      finish(() => reject(tooLarge(maxBytes)));
    };
    const onEnd = () => finish(() => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    // The stream fails only with the connection: Node's "aborted" when the client leaves mid-body.
    const onError = (error: NodeJS.ErrnoException) => finish(() => reject(error.code === "ECONNRESET" ? clientLeft() : error));
    const onClose = () => finish(() => reject(clientLeft()));
    if (incoming.readableEnded) return resolve(Buffer.alloc(0));
    if (incoming.destroyed) return reject(clientLeft());
    incoming.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
  });
}

function clientLeft(): ApiError {
  return new ApiError("client_closed_request", "the client closed the connection before sending the whole body");
}

async function readAtMost(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read().catch((error: unknown) => {
      // The stream fails only with the connection: Node's "aborted" when the client leaves mid-body.
      if ((error as NodeJS.ErrnoException)?.code !== "ECONNRESET") throw error;
      throw clientLeft();
    });
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError("body_too_large", `the request body is larger than ${maxBytes / 1024} KB`);
}
