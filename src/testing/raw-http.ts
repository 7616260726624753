import { connect } from "node:net";

/**
 * HTTP/1.1 over a bare TCP socket, for what fetch cannot send: malformed request lines and
 * headers, bodies that stop half way, headers that never end.
 */
export interface RawResponse {
  /** 0 when the server closed the connection without answering. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server sent, for assertion messages. */
  raw: string;
  /** From the first byte written to the connection's close. */
  ms: number;
}

export interface RawExchange {
  /** Written in order, `pauseMs` apart (so a body can trickle in). */
  chunks: (string | Buffer)[];
  pauseMs?: number;
  /** Give up (and destroy the socket) after this long; the response so far is returned. */
  timeoutMs?: number;
  /** End the sending side after the last chunk, as a client that stops half way does. */
  halfClose?: boolean;
}

/** Sends the chunks and collects everything until the server closes the connection. */
export function rawExchange(port: number, exchange: RawExchange): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect({ host: "127.0.0.1", port });
    const received: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), exchange.timeoutMs ?? 10_000);
    socket.on("data", (chunk) => received.push(chunk));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // A reset after the answer (the server closing a connection whose body it did not read) is an ending.
      if (error.code !== "ECONNRESET" && error.code !== "EPIPE") reject(error);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(parseResponse(Buffer.concat(received).toString("utf8"), performance.now() - started));
    });
    socket.on("connect", async () => {
      for (const [i, chunk] of exchange.chunks.entries()) {
        if (i > 0 && exchange.pauseMs) await new Promise((r) => setTimeout(r, exchange.pauseMs));
        if (socket.destroyed) return;
        socket.write(chunk);
      }
      if (exchange.halfClose && !socket.destroyed) socket.end();
    });
  });
}

/** The first response on the connection (the server closes after a refusal). */
export function parseResponse(raw: string, ms = 0): RawResponse {
  const headEnd = raw.indexOf("\r\n\r\n");
  if (!raw.startsWith("HTTP/") || headEnd < 0) return { status: 0, headers: {}, body: "", raw, ms };
  const [statusLine, ...lines] = raw.slice(0, headEnd).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = raw.slice(headEnd + 4);
  const length = Number(headers["content-length"] ?? Number.NaN);
  return { status: Number(statusLine.split(" ")[1]), headers, body: Number.isNaN(length) ? rest : rest.slice(0, length), raw, ms };
}
