import type { Redis as RedisClient } from "ioredis";
import { redactUrl } from "../urls.js";
import { LimiterUnavailableError, type RateLimiter } from "./types.js";
import { messageOf } from "../error-message.js";

export interface RedisLimiterOptions {
  /** redis://[user:password@]host:port[/db] */
  url: string;
  /** Put before every limited key, so several services can share one Redis (default "judge:rl:"). */
  prefix?: string;
  /** Longest a command may wait for its answer before the limiter reports Redis unavailable. */
  commandTimeoutMs?: number;
  connectTimeoutMs?: number;
}

/**
 * One hit, decided on the server so that every instance counts in the same window however
 * their clocks drift. The script touches KEYS[1] only (a hash: window start `w`, count `n`),
 * so it runs on Redis Cluster too. A refused hit is not counted, like the database limiter's
 * conditional increment. The key expires when its window ends: the next hit starts over anyway.
 */
const HIT_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local limit, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local offset = tonumber(ARGV[3]) % window
local start = math.floor((now - offset) / window) * window + offset
local reset = start + window - now
local stored = redis.call('HMGET', KEYS[1], 'w', 'n')
local count = 0
if tonumber(stored[1]) == start then count = tonumber(stored[2]) end
if count >= limit then return {0, count, reset} end
count = count + 1
redis.call('HSET', KEYS[1], 'w', start, 'n', count)
redis.call('PEXPIRE', KEYS[1], reset)
return {1, count, reset}
`;

interface WithHitScript {
  judgeHit(key: string, limit: number, windowMs: number, offsetMs: number): Promise<[allowed: number, count: number, resetMs: number]>;
}

/**
 * Windows counted in Redis, exact across every instance sharing it. When Redis cannot answer
 * promptly, hits fail with LimiterUnavailableError rather than waiting or counting locally,
 * while the client keeps reconnecting in the background so the limiter recovers by itself.
 */
export async function createRedisLimiter(options: RedisLimiterOptions): Promise<RateLimiter> {
  // Imported here rather than with the module: ioredis takes longer to load than the rest of
  // the CLI, and only a server with JUDGE_REDIS_URL uses it.
  const { Redis } = await import("ioredis");
  const where = redactUrl(options.url);
  const prefix = options.prefix ?? "judge:rl:";
  const connectTimeoutMs = options.connectTimeoutMs ?? 2000;
  const client = new Redis(options.url, {
    lazyConnect: true,
    connectTimeout: connectTimeoutMs,
    commandTimeout: options.commandTimeoutMs ?? 1000,
    // Queued or retried commands would make requests wait on an outage instead of failing fast.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // A hit whose answer was lost may have been counted: sending it again could count it twice.
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
  });
  client.defineCommand("judgeHit", { numberOfKeys: 1, lua: HIT_SCRIPT });
  // Without a listener ioredis prints every failed (re)connection; the next caller gets the error instead.
  let lastError: Error | undefined;
  client.on("error", (error: Error) => {
    lastError = error;
  });

  // Waits for a connection being made (the first one, or a reconnection under way), but not
  // for a reconnection that is only scheduled: while Redis is down, hits fail at once.
  let connecting: Promise<void> | undefined;
  function connected(): Promise<void> {
    if (client.status === "ready") return Promise.resolve();
    if (client.status === "wait") client.connect().catch(() => undefined);
    if (client.status !== "connecting" && client.status !== "connect") {
      return Promise.reject(lastError ?? new Error(`the connection is ${client.status}`));
    }
    connecting ??= new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        clearTimeout(timer);
        client.off("ready", settle).off("error", settle).off("close", closed);
        connecting = undefined;
        if (error) reject(error);
        else resolve();
      };
      const closed = () => settle(lastError ?? new Error("the connection closed"));
      const timer = setTimeout(() => settle(new Error(`no connection within ${connectTimeoutMs} ms`)), connectTimeoutMs);
      client.once("ready", settle).once("error", settle).once("close", closed);
    });
    return connecting;
  }

  async function call<T>(command: () => Promise<T>): Promise<T> {
    try {
      await connected();
      return await command();
    } catch (error) {
      const reason = messageOf(error);
      throw new LimiterUnavailableError(`Redis at ${where} is unreachable: ${reason}`, { cause: error });
    }
  }

  const scripted = client as RedisClient & WithHitScript;
  return {
    kind: "redis",
    async hit({ key, limit, windowMs, offsetMs }) {
      const [allowed, count, resetMs] = await call(() => scripted.judgeHit(prefix + key, limit, windowMs, offsetMs));
      return allowed === 1 ? { allowed: true, limit, remaining: limit - count, resetMs } : { allowed: false, limit, remaining: 0, resetMs };
    },
    async ping() {
      await call(() => client.ping());
    },
    async close() {
      // QUIT lets answers under way arrive; without a connection there is nothing to wait for.
      if (client.status === "ready") await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}
