import net from "node:net";

/**
 * A TCP forwarder in front of a real service (PostgreSQL, Redis), so a test can make that
 * service unreachable for one server, and only for it. `stop()` closes the port and cuts every
 * connection through it: the server gets ECONNRESET on what it had open and ECONNREFUSED on
 * whatever it opens next. `freeze()` is a network partition instead: connections stay open but
 * nothing more goes through, and new ones are accepted but never answered, so only the
 * server's own timeouts end its waits. `start()` ends either: it listens again on the same
 * port, or lets what was held go through.
 */
export interface TcpProxy {
  /** The port the proxy listens on, stable across stop/start. */
  readonly port: number;
  /** Client connections currently open through the proxy. */
  readonly open: number;
  stop(): Promise<void>;
  freeze(): void;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const clients = new Set<net.Socket>();
  const pairs = new Map<net.Socket, net.Socket>();
  let port = 0;
  let listener: net.Server | undefined;
  let frozen = false;

  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    // A cut connection is the point of this proxy: its errors are expected.
    socket.on("error", () => undefined);
  };

  const accept = (client: net.Socket) => {
    track(client);
    clients.add(client);
    client.on("close", () => clients.delete(client));
    if (frozen) return void client.pause();
    forward(client);
  };

  const forward = (client: net.Socket) => {
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    pairs.set(client, upstream);
    client.on("close", () => {
      pairs.delete(client);
      upstream.destroy();
    });
    upstream.on("close", () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const start = async () => {
    if (frozen) thaw();
    if (listener) return;
    const server = net.createServer(accept);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    const address = server.address();
    port = typeof address === "object" && address ? address.port : port;
    listener = server;
  };

  // What was held goes through now: bytes sent during the partition arrive late, as over TCP.
  const thaw = () => {
    frozen = false;
    for (const client of clients) {
      const upstream = pairs.get(client);
      if (!upstream) {
        forward(client);
        continue;
      }
      client.pipe(upstream);
      upstream.pipe(client);
    }
  };

  const stop = async () => {
    const server = listener;
    listener = undefined;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    clients.clear();
    pairs.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  await start();
  return {
    get port() {
      return port;
    },
    get open() {
      return clients.size;
    },
    stop,
    freeze() {
      frozen = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    start,
    close: stop,
  };
}
