import { parseConfig } from "../config/environment.js";
import type { JudgmentEngine } from "../engine/types.js";
import { start, type RunningService } from "../composition.js";
import { buildServices } from "../services/build.js";
import type { PlanInput } from "../store/types.js";
import { newTestDatabase, type StoreEngine, type TestDatabase } from "./databases.js";
import { addTestAccount } from "./server.js";

/**
 * The service as composition.ts starts it (its HTTP server with the header and body timeouts,
 * its shutdown), in this process, on a fresh database (SQLite unless `store` says PostgreSQL) with
 * one account and key. For tests of what sits under the app: slow and malformed requests,
 * shutdown, hostile traffic.
 */
export interface MainServer {
  url: string;
  port: number;
  key: string;
  accountId: string;
  database: TestDatabase;
  running: RunningService;
  close(): Promise<void>;
}

export async function startMainServer(options: {
  engine: JudgmentEngine;
  /** JUDGE_* settings over the defaults (a free port on 127.0.0.1, silent logs). */
  settings?: Record<string, string>;
  plan?: Partial<PlanInput>;
  balanceMicro?: number;
  store?: StoreEngine;
}): Promise<MainServer> {
  const database = newTestDatabase(options.store ?? "sqlite");
  const config = parseConfig({
    JUDGE_DB: database.location,
    JUDGE_DB_SCHEMA: database.schema,
    JUDGE_HOST: "127.0.0.1",
    JUDGE_PORT: "0",
    JUDGE_LOG_LEVEL: "silent",
    ...options.settings,
  });
  // The account exists before the start, as in a deployment (and so no first-key help is printed).
  const setup = await buildServices(config);
  const { key, accountId } = await addTestAccount(setup, { plan: options.plan, balanceMicro: options.balanceMicro });
  await setup.close();
  const running = await start(config, { engine: options.engine });
  return {
    url: `http://127.0.0.1:${running.port}`,
    port: running.port,
    key,
    accountId,
    database,
    running,
    async close() {
      await running.close({ graceMs: 0 });
      await database.drop();
    },
  };
}
