import type { RateLimiter } from "../limits/types.js";
import type { Store } from "../store/types.js";
import { messageOf } from "../error-message.js";

export interface PartHealth {
  /** What the part is, for people: "SQLite data/judge.db", "PostgreSQL postgres://…", "Redis redis://…". */
  name: string;
  ok: boolean;
  /** Why it is not ok, and what to check. */
  detail?: string;
}

export interface HealthService {
  /** The database and, when configured, Redis: each asked now, none for longer than `timeoutMs`. */
  check(): Promise<{ database: PartHealth; rateLimiter?: PartHealth }>;
}

const CHECK_TIMEOUT_MS = 3_000;

export function createHealthService(store: Store, limiter: RateLimiter, limiterName: string): HealthService {
  const database = `${store.dialect === "sqlite" ? "SQLite" : "PostgreSQL"} ${store.location}`;
  return {
    async check() {
      const [db, redis] = await Promise.all([
        probe(database, () => store.ping()),
        limiter.kind === "redis" ? probe(limiterName, () => limiter.ping()) : undefined,
      ]);
      return redis ? { database: db, rateLimiter: redis } : { database: db };
    },
  };
}

async function probe(name: string, ping: () => Promise<void>): Promise<PartHealth> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([ping(), timeout]);
    return { name, ok: true };
  } catch (error) {
    return { name, ok: false, detail: messageOf(error) };
  } finally {
    clearTimeout(timer);
  }
}
