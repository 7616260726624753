import { ApiError } from "../errors.js";

/** The spec's limit on a request body: 256 KB. */
export const MAX_BODY_BYTES = 256 * 1024;

/**
 * Reads a JSON body, refusing it as soon as it passes `maxBytes`: at once from Content-Length,
 * and while streaming for chunked bodies, so an oversized body is never held in memory.
 */
export async function readJsonBody(request: Request, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const bytes = await readAtMost(request, maxBytes);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError("invalid_json", "the request body is not valid UTF-8");
  }
  if (text.trim() === "") throw new ApiError("invalid_json", "the request body is empty; send a JSON object");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError("invalid_json", `the request body is not valid JSON: ${(error as Error).message}`);
  }
}

async function readAtMost(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
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
