// @lane timed: asserts on elapsed time, so it runs after everything else, beside one other timed file at most (src/testing/test-kinds.ts).
import { randomUUID } from "node:crypto";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deleteRedisKeys, newTestDatabase, REDIS_TEST_URL, type StoreEngine } from "../testing/databases.js";
import { createDatabaseLimiter } from "./database-limiter.js";
import { createRedisLimiter } from "./redis-limiter.js";
import { LimiterUnavailableError, type RateLimitDecision, type RateLimiter } from "./types.js";

/** Limiters over one shared backend: `open` gives another instance counting in the same windows. */
interface Backend {
  open(): Promise<RateLimiter>;
  stop(): Promise<void>;
}

function onDatabase(engine: StoreEngine): () => Promise<Backend> {
  return async () => {
    const database = newTestDatabase(engine);
    return {
      async open() {
        const store = await database.store();
        return createDatabaseLimiter(store.rateWindows, { ping: () => store.ping() });
      },
      stop: () => database.drop(),
    };
  };
}

async function onRedis(): Promise<Backend> {
  const prefix = `test:${process.pid}:${randomUUID()}:`;
  const limiters: RateLimiter[] = [];
  return {
    async open() {
      limiters.push(await createRedisLimiter({ url: REDIS_TEST_URL, prefix }));
      return limiters.at(-1)!;
    },
    async stop() {
      for (const limiter of limiters) await limiter.close();
      await deleteRedisKeys(prefix);
    },
  };
}

/**
 * An offset whose window begins at this instant (by the limiter's own clock, which for Redis
 * is the server's), so a test has the whole window before a boundary can split its hits.
 */
async function freshWindow(limiter: RateLimiter, windowMs: number): Promise<number> {
  const probe = await limiter.hit({ key: "probe", limit: 1, windowMs, offsetMs: 0 });
  return windowMs - probe.resetMs;
}

const outcome = (decisions: RateLimitDecision[]) => decisions.map((each) => [each.allowed, each.remaining]);

const backends = [
  { name: "database limiter on SQLite", start: onDatabase("sqlite") },
  { name: "database limiter on PostgreSQL", start: onDatabase("postgres") },
  { name: "Redis limiter", start: onRedis },
];

describe.each(backends)("$name", ({ start }) => {
  const windowMs = 2000;
  let backend: Backend;
  let limiter: RateLimiter;
  beforeEach(async () => {
    backend = await start();
    limiter = await backend.open();
  });
  afterEach(() => backend.stop());

  async function hits(key: string, count: number, limit: number, offsetMs: number): Promise<RateLimitDecision[]> {
    const decisions: RateLimitDecision[] = [];
    for (let i = 0; i < count; i++) decisions.push(await limiter.hit({ key, limit, windowMs, offsetMs }));
    return decisions;
  }

  it("allows exactly `limit` hits in a window, counting `remaining` down, and refuses the rest", async () => {
    const decisions = await hits("client", 8, 5, await freshWindow(limiter, windowMs));
    const all = JSON.stringify(decisions);
    expect(outcome(decisions), all).toEqual([
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
      [false, 0],
    ]);
    expect(
      decisions.every((each) => each.limit === 5 && each.resetMs > 0 && each.resetMs <= windowMs),
      all,
    ).toBe(true);
  });

  it("starts over when the next window begins", async () => {
    const offsetMs = await freshWindow(limiter, windowMs);
    const first = await hits("client", 3, 2, offsetMs);
    await sleep(first[2].resetMs + 20);
    const second = await hits("client", 3, 2, offsetMs);
    const all = JSON.stringify({ first, second });
    expect([outcome(first), outcome(second)], all).toEqual([
      [
        [true, 1],
        [true, 0],
        [false, 0],
      ],
      [
        [true, 1],
        [true, 0],
        [false, 0],
      ],
    ]);
  });

  it("gives every key its own limit", async () => {
    const offsetMs = await freshWindow(limiter, windowMs);
    const decisions: (RateLimitDecision & { key: string })[] = [];
    for (let round = 0; round < 4; round++) {
      for (const key of ["a", "b"]) decisions.push({ key, ...(await limiter.hit({ key, limit: 3, windowMs, offsetMs })) });
    }
    const byKey = (key: string) => outcome(decisions.filter((each) => each.key === key));
    const expected = [
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ];
    expect([byKey("a"), byKey("b")], JSON.stringify(decisions)).toEqual([expected, expected]);
  });

  it("shifts a key's window boundaries by its offset, taken modulo the window", async () => {
    // `early`'s window begins now, `late`'s half a window ago: late resets while early still refuses.
    const base = await freshWindow(limiter, windowMs);
    const offsets = { early: base, late: base + windowMs / 2, wrapped: base + windowMs / 2 - 3 * windowMs };
    const before: Record<string, RateLimitDecision[]> = {};
    for (const [key, offsetMs] of Object.entries(offsets)) before[key] = await hits(key, 3, 2, offsetMs);
    const after: Record<string, RateLimitDecision[]> = {};
    await sleep(Math.max(before.late[2].resetMs, before.wrapped[2].resetMs) + 20);
    for (const [key, offsetMs] of Object.entries(offsets)) after[key] = await hits(key, 1, 2, offsetMs);
    const all = JSON.stringify({ before, after });
    const exhausted = [
      [true, 1],
      [true, 0],
      [false, 0],
    ];
    expect([outcome(before.early), outcome(before.late), outcome(before.wrapped)], all).toEqual([exhausted, exhausted, exhausted]);
    expect(
      before.early.every((each) => each.resetMs > windowMs / 2),
      all,
    ).toBe(true);
    expect(
      [...before.late, ...before.wrapped].every((each) => each.resetMs <= windowMs / 2),
      all,
    ).toBe(true);
    expect([outcome(after.early), outcome(after.late), outcome(after.wrapped)], all).toEqual([[[false, 0]], [[true, 1]], [[true, 1]]]);
  });

  it("allows exactly `limit` of many concurrent hits, across two limiter instances", async () => {
    // A long window: the 400 hits must not straddle a boundary even on a loaded machine.
    const longWindowMs = 30_000;
    const [one, two] = [limiter, await backend.open()];
    const offsetMs = await freshWindow(one, longWindowMs);
    const decisions = await Promise.all(
      Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? one : two).hit({ key: "shared", limit: 150, windowMs: longWindowMs, offsetMs })),
    );
    const allowed = decisions.filter((each) => each.allowed);
    const all = JSON.stringify(decisions);
    expect(allowed.length, all).toBe(150);
    // Each count was handed out once: no two hits saw the same count.
    expect(
      allowed.map((each) => each.remaining).sort((a, b) => a - b),
      all,
    ).toEqual(Array.from({ length: 150 }, (_, i) => i));
    expect(
      decisions.filter((each) => !each.allowed).every((each) => each.remaining === 0),
      all,
    ).toBe(true);
  });

  it("answers ping while its backend is up", async () => {
    await expect(limiter.ping()).resolves.toBeUndefined();
  });
});

describe("Redis limiter", () => {
  const input = { key: "client", limit: 10, windowMs: 2000, offsetMs: 0 };
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const each of cleanup.splice(0).reverse()) await each();
  });

  async function limiterAt(url: string, prefix = "test:unused:"): Promise<RateLimiter> {
    const limiter = await createRedisLimiter({ url, prefix });
    cleanup.push(() => limiter.close());
    return limiter;
  }

  async function expectUnavailable(attempt: Promise<unknown>, where: string): Promise<void> {
    const started = Date.now();
    const outcome = await attempt.then(
      (value) => ({ resolved: value }),
      (error: unknown) => error,
    );
    expect(outcome, String(JSON.stringify(outcome) ?? outcome)).toBeInstanceOf(LimiterUnavailableError);
    expect((outcome as Error).message).toContain(`Redis at ${where} is unreachable`);
    expect(Date.now() - started).toBeLessThan(5000);
  }

  it("keeps one hash per limited key, expiring when its window ends", async () => {
    const prefix = `test:${process.pid}:${randomUUID()}:`;
    const redis = new Redis(REDIS_TEST_URL);
    cleanup.push(
      () => deleteRedisKeys(prefix),
      async () => redis.disconnect(),
    );
    const decision = await (await limiterAt(REDIS_TEST_URL, prefix)).hit(input);
    const [keys, fields, ttl] = await Promise.all([redis.keys(`${prefix}*`), redis.hgetall(`${prefix}client`), redis.pttl(`${prefix}client`)]);
    expect({ keys, fields: Object.keys(fields).sort(), n: fields.n }).toEqual({ keys: [`${prefix}client`], fields: ["n", "w"], n: "1" });
    expect(ttl, JSON.stringify({ decision, ttl })).toBeGreaterThan(0);
    expect(ttl, JSON.stringify({ decision, ttl })).toBeLessThanOrEqual(decision.resetMs);
  });

  it("rejects hits and pings at once when nothing listens, and keeps the password out of the message", async () => {
    const limiter = await limiterAt("redis://:s3cret@127.0.0.1:1");
    for (let attempt = 0; attempt < 3; attempt++) await expectUnavailable(limiter.hit(input), "redis://:***@127.0.0.1:1");
    await expectUnavailable(limiter.ping(), "redis://:***@127.0.0.1:1");
    const error = await limiter.hit(input).catch((rejection: Error) => rejection);
    expect((error as Error).message).not.toContain("s3cret");
  });

  it("rejects hits and pings within the timeouts when Redis accepts connections but never answers", async () => {
    const silent = await tcpServer(() => undefined);
    cleanup.push(silent.stop);
    const url = `redis://127.0.0.1:${silent.port}`;
    const limiter = await limiterAt(url);
    await expectUnavailable(limiter.hit(input), url);
    await expectUnavailable(limiter.ping(), url);
  });

  it("counts again once Redis is back, without a restart", async () => {
    // A proxy in front of the real Redis stands for Redis going away and coming back.
    const proxy = await tcpServer((inbound, track) => {
      const outbound = track(connect(6379, "127.0.0.1"));
      inbound.pipe(outbound).pipe(inbound);
    });
    const prefix = `test:${process.pid}:${randomUUID()}:`;
    cleanup.push(() => deleteRedisKeys(prefix), proxy.stop);
    const url = `redis://127.0.0.1:${proxy.port}`;
    const limiter = await limiterAt(url, prefix);
    expect(await limiter.hit(input)).toMatchObject({ allowed: true, remaining: 9 });

    await proxy.stop();
    await expectUnavailable(limiter.hit(input), url);

    await proxy.restart();
    const deadline = Date.now() + 10_000;
    let decision: RateLimitDecision | undefined;
    while (!decision && Date.now() < deadline) decision = await limiter.hit(input).catch(() => sleep(100, undefined));
    expect(decision?.allowed).toBe(true);
  });
});

/** A TCP server on 127.0.0.1 whose `stop` also cuts the connections it made, and `restart` listens on the same port again. */
async function tcpServer(handle: (socket: Socket, track: (socket: Socket) => Socket) => void) {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket.on("error", () => undefined).on("close", () => sockets.delete(socket)));
    return socket;
  };
  const server = createServer((socket) => handle(track(socket), track));
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    restart: () => listen(port),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        if (server.listening) server.close(() => resolve());
        else resolve();
      }),
  };
}
