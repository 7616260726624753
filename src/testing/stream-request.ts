import { request, type IncomingHttpHeaders } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

export interface StreamedRequestResult {
  status: number | undefined;
  headers: IncomingHttpHeaders;
  text: string;
  /** Body bytes handed to the socket before the response arrived (or in all). */
  bytesWritten: number;
  /** Whether the whole body was written (and the request ended) before the response arrived. */
  finishedWriting: boolean;
  /** A client-side error (reset connection, …), if the exchange ended in one. */
  error?: string;
}

/**
 * POSTs a body of `totalBytes` with `Transfer-Encoding: chunked` (no Content-Length), `prefix`
 * first and then filler, in `chunkSize` chunks `pauseMs` apart. Stops writing as soon as a
 * response arrives, so the result shows whether the server answered before reading the whole
 * body. The pause keeps the writer from filling the kernel's socket buffers (several MB on
 * loopback) faster than the server, in the same process, gets to run.
 */
export async function postChunked(
  url: string,
  headers: Record<string, string>,
  options: { prefix: string; suffix?: string; totalBytes: number; chunkSize?: number; filler?: string; stallMs?: number; pauseMs?: number },
): Promise<StreamedRequestResult> {
  const chunkSize = options.chunkSize ?? 16 * 1024;
  const stallMs = options.stallMs ?? 10_000;
  const pauseMs = options.pauseMs ?? 1;
  const body = Buffer.concat([
    Buffer.from(options.prefix),
    Buffer.alloc(options.totalBytes - Buffer.byteLength(options.prefix) - Buffer.byteLength(options.suffix ?? ""), options.filler ?? "x"),
    Buffer.from(options.suffix ?? ""),
  ]);
  const req = request(url, { method: "POST", headers: { ...headers, "transfer-encoding": "chunked" } });
  let error: string | undefined;
  let status: number | undefined;
  let responseHeaders: IncomingHttpHeaders = {};
  let responded = false;
  const done = new Promise<string>((resolve) => {
    req.on("error", (e) => {
      error = `${(e as NodeJS.ErrnoException).code ?? ""} ${e.message}`;
      resolve("");
    });
    req.on("response", (response) => {
      responded = true;
      status = response.statusCode;
      responseHeaders = response.headers;
      const parts: Buffer[] = [];
      response.on("data", (part: Buffer) => parts.push(part));
      response.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
      response.on("error", (e) => {
        error = `response: ${e.message}`;
        resolve(Buffer.concat(parts).toString("utf8"));
      });
    });
  });

  let written = 0;
  while (written < body.length && !responded && error === undefined) {
    const chunk = body.subarray(written, written + chunkSize);
    const flushed = req.write(chunk);
    written += chunk.length;
    if (!flushed) {
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<"stalled">((resolve) => (timer = setTimeout(resolve, stallMs, "stalled")));
      const outcome = await Promise.race([new Promise((resolve) => req.once("drain", resolve)), done, stalled]);
      clearTimeout(timer);
      if (outcome === "stalled" && !responded) {
        error = `stalled: the server neither read more of the body nor answered within ${stallMs} ms`;
        break;
      }
    }
    // A timer, not just 'drain' (which can come on the next tick): lets the server run in between.
    await sleep(pauseMs);
  }
  const finishedWriting = written >= body.length && !responded && error === undefined;
  if (finishedWriting) req.end();
  const text = error?.startsWith("stalled") ? "" : await done;
  if (!req.destroyed) req.destroy();
  return { status, headers: responseHeaders, text, bytesWritten: written, finishedWriting, error };
}

export function showStreamed(result: StreamedRequestResult, label = "chunked POST"): string {
  const headers = Object.entries(result.headers)
    .map(([name, value]) => `  ${name}: ${String(value)}`)
    .join("\n");
  return (
    `${label} -> ${result.status ?? "no response"} after writing ${result.bytesWritten} bytes` +
    ` (finished writing: ${result.finishedWriting})${result.error ? `, client error: ${result.error}` : ""}\n${headers}\n  body: ${result.text}`
  );
}
