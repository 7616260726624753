import { serve } from "@hono/node-server";
import { createServer, STATUS_CODES, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { ApiError, ERROR_STATUS, type ErrorCode } from "../errors.js";
import type { Logger } from "../logger.js";
import { keepHalfOpenConnections } from "./half-close.js";
import { routeNotFound } from "./not-found.js";
import { newRequestId } from "./request-id.js";
import { boundSockets, SOCKET_LIMITS, type BoundedListener, type SocketLimits, type SocketStats } from "./socket-bounds.js";

/**
 * The Node HTTP server under the app: how long a client may take to send a request, what a
 * client whose request never became one is told, and how the server stops.
 */
export interface HttpServerOptions {
  hostname: string;
  port: number;
  /** Longest the request line and headers may take to arrive (408 past it). */
  headersTimeoutMs: number;
  /** Longest the whole request, headers and body, may take to arrive (408 past it). */
  bodyTimeoutMs: number;
  log: Logger;
  /** Told of each request the server refuses before any route (its 408, 431 or 400), for the metrics. */
  onRefused?: (status: number) => void;
  /** What one connection may make the server hold (socket-bounds.ts); SOCKET_LIMITS unless given. */
  socketLimits?: SocketLimits;
}

export interface HttpServer {
  server: Server;
  port: number;
  /**
   * Stops accepting connections and waits up to `graceMs` for the requests in flight. Those
   * still running then lose their connection, so each handler sees its client leave (its
   * hold is released, nothing is charged); resolves once their handlers have finished.
   */
  shutdown(graceMs: number): Promise<{ aborted: number }>;
  /** The most any one connection has had in flight, waiting and buffered, and those closed for it. */
  socketStats(): SocketStats;
}

type Fetch = (request: Request, env: { incoming: IncomingMessage; outgoing: ServerResponse }) => Response | Promise<Response>;

/**
 * How long cut requests get to release what they hold (a database round trip or two); a hold
 * not released by then expires and the sweeper of some instance releases it.
 */
export const SETTLE_AFTER_ABORT_MS = 1_500;

export async function startHttpServer(fetch: Fetch, options: HttpServerOptions): Promise<HttpServer> {
  const handlers = new Counter();
  const responses = new Counter();
  let closing = false;
  let bounded: BoundedListener | undefined;
  const onStart = (_request: IncomingMessage, response: ServerResponse) => {
    responses.add();
    // A keep-alive client would otherwise send its next request into a server that is stopping.
    if (closing) response.setHeader("connection", "close");
  };
  const server = serve({
    fetch: async (request, env) => {
      handlers.add();
      try {
        return await fetch(request, env as { incoming: IncomingMessage; outgoing: ServerResponse });
      } finally {
        handlers.remove();
      }
    },
    hostname: options.hostname,
    port: options.port,
    serverOptions: {
      headersTimeout: options.headersTimeoutMs,
      // Node measures this one from the request's first byte, so it bounds headers and body together.
      requestTimeout: Math.max(options.bodyTimeoutMs, options.headersTimeoutMs),
      // Node checks both only this often (30 s by default, which made a 60 s limit take 90 s).
      connectionsCheckingInterval: Math.min(1_000, Math.ceil(options.headersTimeoutMs / 4)),
    },
    // Every request goes through the per-connection bounds before the app sees it.
    createServer: ((serverOptions: object, app: RequestListener) => {
      bounded = boundSockets(app, options.socketLimits ?? SOCKET_LIMITS, { onStart, onSettled: () => responses.remove() });
      return createServer(serverOptions, bounded.listener);
    }) as typeof createServer,
  }) as Server;
  // A client that half-closes once its request is sent still reads: it gets its answer.
  keepHalfOpenConnections(server);
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => answerClientError(error, socket, options));
  // Node hands CONNECT (a proxy's tunnel request) to this event and, with no listener, drops the
  // socket without a word; no route here tunnels, so it gets the 404 any unknown route gets.
  server.on("connect", (request: IncomingMessage, socket: Socket) => {
    const refusal = routeNotFound("CONNECT", request.url ?? "");
    writeRefusal(socket, refusal.code, refusal.message, "CONNECT", options);
  });
  const port = await listening(server);

  return {
    server,
    port,
    socketStats: () => bounded!.stats(),
    async shutdown(graceMs) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const finished = await until(() => handlers.count === 0 && responses.count === 0, graceMs);
      const aborted = finished ? 0 : Math.max(handlers.count, responses.count);
      server.closeAllConnections();
      if (aborted > 0) await until(() => handlers.count === 0, SETTLE_AFTER_ABORT_MS);
      await closed;
      return { aborted };
    },
  };
}

class Counter {
  count = 0;
  add() {
    this.count++;
  }
  remove() {
    this.count--;
  }
}

/** Polls `done` until it holds (true) or `ms` pass (false); shutdown is rare, a poll is plenty. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

function listening(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.once("listening", () => {
      server.off("error", reject);
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : 0);
    });
  });
}

/**
 * Node answers a request it could not parse, or one that came too slowly, with a bare status
 * line and no body. These get the JSON error body of every other error instead, then the
 * connection is closed (its framing can no longer be trusted).
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket, options: HttpServerOptions): void {
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const refusal = describe(error, options, inFlight !== undefined);
  writeRefusal(socket, refusal.code, refusal.message, error.code, options);
}

/** An error answer written straight to the socket, for requests that never reach the app. */
function writeRefusal(socket: Socket, code: ErrorCode, message: string, reason: string | undefined, options: HttpServerOptions): void {
  const id = newRequestId();
  const body = JSON.stringify(new ApiError(code, message).body());
  const status = ERROR_STATUS[code];
  options.log.info("request refused by the HTTP server", { request_id: id, status, code, reason });
  options.onRefused?.(status);
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}`,
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${id}`,
    `x-typesafe-request-id: ${id}`,
    "connection: close",
  ];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
  // A client that never reads must not keep the socket.
  setTimeout(() => socket.destroy(), 1_000).unref();
}

function describe(error: NodeJS.ErrnoException, options: HttpServerOptions, headersArrived: boolean): { code: ErrorCode; message: string } {
  const seconds = (ms: number) => `${ms / 1000} s`;
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return headersArrived
        ? { code: "request_timeout", message: `the request did not arrive whole within ${seconds(options.bodyTimeoutMs)}; send the body at once` }
        : { code: "request_timeout", message: `the request line and headers did not arrive within ${seconds(options.headersTimeoutMs)}` };
    case "HPE_HEADER_OVERFLOW":
      return { code: "headers_too_large", message: "the request line and headers are larger than 16 KB" };
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { code: "body_too_large", message: "the chunk extensions of the body are larger than 16 KB" };
    case "HPE_INVALID_EOF_STATE":
      return { code: "malformed_request", message: "the client ended its sending side before the request was whole" };
    default: {
      // llhttp's reason ("Invalid method encountered"), never the bytes the client sent.
      const reason = (error as { reason?: string }).reason ?? error.code ?? "unreadable";
      return { code: "malformed_request", message: `not a well-formed HTTP/1.1 request: ${reason}` };
    }
  }
}
