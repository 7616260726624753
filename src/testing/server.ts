import { serve, type ServerType } from "@hono/node-server";
import { buildApp } from "../app.js";
import { createLlamaEngine } from "../engine/llama-engine.js";
import type { JudgmentEngine } from "../engine/types.js";
import { NEUTRAL_TEMPERATURES } from "../judgment/answers.js";
import { createLogger } from "../logger.js";
import { createStore, type Store } from "../store/store.js";
import { tinyFixturePath } from "./fixture.js";

export interface TestServer {
  url: string;
  /** A valid key of `accountId`. */
  key: string;
  accountId: string;
  store: Store;
  engine: JudgmentEngine;
  /** Every log line the server wrote, to check nothing secret leaks. */
  logLines: string[];
  close(): Promise<void>;
}

/**
 * The real app on a free port: real SQLite store (in memory), and by default the real engine
 * on the tiny fixture model. Pass `engine` only to inject faults (failing, stalled, loading).
 */
export async function startTestServer(options: { engine?: JudgmentEngine; maxQuestions?: number } = {}): Promise<TestServer> {
  const store = createStore({ path: ":memory:" });
  const account = store.accounts.create({ name: "test account" });
  const { key } = store.keys.create({ accountId: account.id, name: "test key" });
  const engine = options.engine ?? (await readyTinyEngine());
  const logLines: string[] = [];
  const app = buildApp({
    engine,
    keys: store.keys,
    log: createLogger("debug", (line) => logLines.push(line)),
    maxQuestions: options.maxQuestions ?? 64,
    temperatures: NEUTRAL_TEMPERATURES,
    releaseDate: "2026-01-01",
  });
  const server: ServerType = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    key,
    accountId: account.id,
    store,
    engine,
    logLines,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (!options.engine) await engine.close();
      store.close();
    },
  };
}

export async function readyTinyEngine() {
  const engine = createLlamaEngine({
    model: await tinyFixturePath(),
    modelsDir: ".",
    contextSize: 8192,
    maxRequestTokens: 100_000,
    threads: 1,
  });
  await engine.ready;
  return engine;
}
