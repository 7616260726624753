import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * What one connection may make the server hold. HTTP/1.1 lets a client send requests back to
 * back (pipelining) before reading any answer, and Node parses every request of a read (up to
 * 64 KB, over 3,000 bare GETs) at once and hands each to the app, whose answers then queue in
 * memory behind the first: one socket that never read took the server from 172 to 533 MB, a
 * few of them past a small container's heap. These bound it, for every route alike.
 */
export interface SocketLimits {
  /** Requests of one connection being answered at once; those after them wait, unanswered. */
  maxInFlight: number;
  /** Requests of one connection waiting behind those; one more and the connection is closed. */
  maxWaiting: number;
  /** Answer bytes buffered for one connection past which none of its waiting requests is started. */
  maxBufferedBytes: number;
  /** How long a connection may stay past maxBufferedBytes with its client taking nothing before it is closed. */
  stallTimeoutMs: number;
}

export const SOCKET_LIMITS: SocketLimits = {
  maxInFlight: 16,
  maxWaiting: 64,
  maxBufferedBytes: 1024 * 1024,
  stallTimeoutMs: 30_000,
};

/** The largest each bound was seen at on any one connection, and the connections closed for them. */
export interface SocketStats {
  peakInFlight: number;
  peakWaiting: number;
  peakBufferedBytes: number;
  closedForPipelining: number;
  closedForNotReading: number;
}

type Listener = (request: IncomingMessage, response: ServerResponse) => void;

export interface BoundedListener {
  listener: Listener;
  stats(): SocketStats;
}

interface Connection {
  socket: Socket;
  inFlight: Map<ServerResponse, () => void>;
  waiting: [IncomingMessage, ServerResponse][];
  closed: boolean;
  watch?: NodeJS.Timeout;
}

/**
 * Wraps the app's request listener so that each connection has at most `maxInFlight` requests
 * handed to the app; the rest wait in order (already parsed: Node cannot take them back) and are
 * started as answers complete. No request is started while the connection's buffered answers
 * are past `maxBufferedBytes` (Node itself stops reading a socket whose answers are not taken),
 * and a connection that stays past it taking nothing for `stallTimeoutMs`, or that has more
 * than `maxWaiting` requests waiting, is closed: a client reading its answers never gets there.
 * `onStart` runs as each request is handed to the app; `onSettled` once its answer is done.
 */
export function boundSockets(app: Listener, limits: SocketLimits, hooks: { onStart?: Listener; onSettled?: () => void } = {}): BoundedListener {
  const connections = new WeakMap<Socket, Connection>();
  const stats: SocketStats = { peakInFlight: 0, peakWaiting: 0, peakBufferedBytes: 0, closedForPipelining: 0, closedForNotReading: 0 };

  const connectionOf = (socket: Socket): Connection => {
    let connection = connections.get(socket);
    if (connection) return connection;
    connection = { socket, inFlight: new Map(), waiting: [], closed: false };
    connections.set(socket, connection);
    const opened = connection;
    socket.once("close", () => closed(opened));
    socket.on("drain", () => pump(opened));
    return connection;
  };

  const closed = (connection: Connection) => {
    if (connection.closed) return;
    connection.closed = true;
    clearInterval(connection.watch);
    connection.waiting = [];
    // Node emits no close for an answer still queued behind another when the socket goes.
    for (const settle of [...connection.inFlight.values()]) settle();
  };

  // Closed at once: Node goes on parsing the rest of the read into requests after a destroy.
  const cut = (connection: Connection) => {
    closed(connection);
    connection.socket.destroy();
  };

  const pump = (connection: Connection) => {
    if (connection.closed) return;
    while (connection.waiting.length > 0 && connection.inFlight.size < limits.maxInFlight && !overBuffered(connection)) {
      const [request, response] = connection.waiting.shift()!;
      start(connection, request, response);
    }
  };

  const overBuffered = (connection: Connection): boolean => {
    const bytes = bufferedBytes(connection);
    stats.peakBufferedBytes = Math.max(stats.peakBufferedBytes, bytes);
    if (bytes <= limits.maxBufferedBytes) return false;
    watch(connection);
    return true;
  };

  const start = (connection: Connection, request: IncomingMessage, response: ServerResponse) => {
    let done = false;
    const settle = () => {
      if (done) return;
      done = true;
      connection.inFlight.delete(response);
      hooks.onSettled?.();
      pump(connection);
    };
    connection.inFlight.set(response, settle);
    stats.peakInFlight = Math.max(stats.peakInFlight, connection.inFlight.size);
    response.once("close", settle);
    // The app has written the whole answer: if it is not being taken, start watching.
    response.once("prefinish", () => void overBuffered(connection));
    hooks.onStart?.(request, response);
    app(request, response);
  };

  /** Past the limit: checked a few times per stall timeout until it drains, or closed if nothing moves. */
  const watch = (connection: Connection) => {
    if (connection.watch || connection.closed) return;
    const { socket } = connection;
    let taken = takenBytes(socket);
    let lastProgress = Date.now();
    connection.watch = setInterval(
      () => {
        if (bufferedBytes(connection) <= limits.maxBufferedBytes) {
          clearInterval(connection.watch);
          connection.watch = undefined;
          return pump(connection);
        }
        const now = takenBytes(socket);
        if (now > taken) {
          taken = now;
          lastProgress = Date.now();
        } else if (Date.now() - lastProgress >= limits.stallTimeoutMs) {
          stats.closedForNotReading++;
          cut(connection);
        }
      },
      Math.max(10, Math.floor(limits.stallTimeoutMs / 4)),
    );
    connection.watch.unref();
  };

  const listener: Listener = (request, response) => {
    const connection = connectionOf(request.socket);
    if (connection.closed) return;
    connection.waiting.push([request, response]);
    if (connection.waiting.length > limits.maxWaiting) {
      stats.closedForPipelining++;
      cut(connection);
      return;
    }
    pump(connection);
    stats.peakWaiting = Math.max(stats.peakWaiting, connection.waiting.length);
  };

  return { listener, stats: () => ({ ...stats }) };
}

/**
 * What the connection holds for its client: the socket's own buffer, and the answers queued
 * behind the one being written (Node keeps those in each response until its turn).
 */
function bufferedBytes(connection: Connection): number {
  let bytes = connection.socket.writableLength;
  for (const response of connection.inFlight.keys()) bytes += (response as ServerResponse & { outputSize?: number }).outputSize ?? 0;
  return bytes;
}

/** Bytes the kernel has accepted (bytesWritten counts what is still buffered, too). */
function takenBytes(socket: Socket): number {
  return socket.bytesWritten - socket.writableLength;
}
