import type { Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * A client's FIN while its request runs. TCP cannot tell a client that half-closed once its
 * request was sent (shutdown(SHUT_WR): it still reads, and must get its answer) from one that
 * closed the connection and left (it must not be charged for an answer it never reads): both
 * send a FIN. Only writing tells: a peer that closed answers data with a reset, and the next
 * write then fails, which destroys the socket, and the request is cut as any client that left.
 * So the server keeps half-open connections (Node's default ends the socket at the FIN, cutting
 * every such request) and, for a request still running, writes `100 Continue` interim responses:
 * the only bytes HTTP/1.1 allows before the final response, which every client must parse (RFC
 * 9110 §15.2). A few, spread over long enough for a reset to come back over a slow network; Go's
 * client accepts at most 5. HTTP/1.0 clients may not be sent one, so theirs is cut as before.
 */
const PROBES_AFTER_MS = [0, 250, 1_500];

export function keepHalfOpenConnections(server: Server): void {
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on("connection", (socket: Socket) => socket.once("end", () => probeOnEnd(socket)));
}

function probeOnEnd(socket: Socket): void {
  // Node's own: the response being written on this socket now (pipelined ones wait behind it).
  const response = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  // None running: Node ends the socket itself. Headers sent: the answer's own bytes are the probe.
  if (!response || response.headersSent) return;
  if (response.req.httpVersionMinor === 0 && response.req.httpVersionMajor === 1) {
    socket.destroy();
    return;
  }
  const timers = PROBES_AFTER_MS.map((ms) =>
    setTimeout(() => {
      if (socket.writable && !response.headersSent && !response.writableEnded) response.writeContinue();
    }, ms),
  );
  response.once("close", () => timers.forEach(clearTimeout));
}
