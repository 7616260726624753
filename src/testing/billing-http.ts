import { afterAll, afterEach, beforeAll } from "vitest";
import type { JudgmentEngine } from "../engine/types.js";
import { fakeClock } from "../store/test-helpers.js";
import type { Services } from "../services/build.js";
import type { StoreEngine, TestDatabase } from "./databases.js";
import type { CapturedResponse } from "./http-client.js";
import { addTestAccount, readyTinyEngine, startTestServer, type TestServer, type TestServerOptions } from "./server.js";
import { createStallingEngine, type StallingEngine } from "./stalling-engine.js";

/** Route-level billing tests: servers on databases of their own (SQLite or PostgreSQL), their money state, and their headers. */

export interface BillingServer extends TestServer {
  clock: ReturnType<typeof fakeClock>;
  /** Moves the services' clock to `ms` (rate windows, periods, reservation and key expiry). */
  setTime(ms: number): void;
}

export type BillingServerOptions = Omit<TestServerOptions, "now"> & { start?: number };

/** A test server on a database of its own, its services on a fake clock starting at `start`. */
export async function startBillingServer(options: BillingServerOptions = {}): Promise<BillingServer> {
  const clock = fakeClock(options.start ?? Date.UTC(2026, 4, 4, 12, 0, 0, 0));
  const server = await startTestServer({ ...options, now: clock.now });
  return { ...server, clock, setTime: (ms) => clock.advance(ms - clock.now()) };
}

/** What `useBillingServers` gives a test file; read `inner` and `engine` inside tests, once loaded. */
export interface BillingServers<E extends JudgmentEngine> {
  /** The real engine on the tiny model, shared by the file's tests. */
  readonly inner: JudgmentEngine;
  /** The engine servers run on unless their options name one: `inner`, or `inner` behind a stall gate. */
  readonly engine: E;
  /** The tiny engine, loaded on the first call (with `lazy`, the only thing that loads it). */
  tiny(): Promise<JudgmentEngine>;
  /** A billing server on a fresh database of the file's store engine, on `engine` (with `lazy`, on the engine the options name), closed after the test. */
  server(options?: BillingServerOptions): Promise<BillingServer>;
}

/**
 * The set-up of a file of billing tests over HTTP, as vitest hooks: one
 * tiny engine loaded before the tests (`stalling` puts it behind a stall gate, whose gates are
 * all opened after each test; `lazy` loads it only when a test calls `tiny()`, and its servers
 * get no default engine), and servers closed after each test.
 */
export function useBillingServers(options: { stalling: true; store?: StoreEngine }): BillingServers<StallingEngine>;
export function useBillingServers(options?: { stalling?: false; lazy?: boolean; store?: StoreEngine }): BillingServers<JudgmentEngine>;
export function useBillingServers(options: { stalling?: boolean; lazy?: boolean; store?: StoreEngine } = {}): BillingServers<JudgmentEngine> {
  const started: BillingServer[] = [];
  let loading: Promise<JudgmentEngine> | undefined;
  let inner: JudgmentEngine | undefined;
  let engine: JudgmentEngine | undefined;
  const tiny = () => (loading ??= readyTinyEngine());
  const loaded = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the tiny engine is not loaded yet: read it inside a test");
    return value;
  };

  if (!options.lazy) {
    beforeAll(async () => {
      inner = await tiny();
      engine = options.stalling ? createStallingEngine(inner) : inner;
    });
  }
  afterEach(async () => {
    if (options.stalling) (engine as StallingEngine | undefined)?.releaseAll();
    for (const server of started.splice(0)) await server.close();
  });
  afterAll(async () => {
    // A failed load was reported where it was awaited.
    await (await loading?.catch(() => undefined))?.close();
  });

  return {
    get inner() {
      return loaded(inner);
    },
    get engine() {
      return loaded(engine);
    },
    tiny,
    async server(serverOptions = {}) {
      const base = { store: options.store, ...serverOptions };
      const server = await startBillingServer(options.lazy ? base : { engine: loaded(engine), ...base });
      started.push(server);
      return server;
    },
  };
}

/** Another account (and key) on the server's store, on the plan given or the server account's plan. */
export async function addAccount(server: TestServer, options: { planId?: string; balanceMicro?: number } = {}) {
  const planId = options.planId ?? (await server.store.accounts.get(server.accountId))!.planId;
  const { accountId, key } = await addTestAccount(server.services, { planId, balanceMicro: options.balanceMicro });
  return { url: server.url, key, accountId };
}

/**
 * Every table that holds money, usage, holds or idempotency keys, row by row: equal before and
 * after a request means it charged and held nothing. Rate windows (every authenticated attempt
 * counts), the keys' last-used times and the server errors the console lists (a 502 is one) are
 * left out, and so are a period's empty usage rows (a reservation creates its period's row; used 0
 * and reserved 0 read the same as no row).
 */
export async function moneyTables(database: TestDatabase): Promise<Record<string, string[]>> {
  const { rate_windows: _windows, api_keys: _keys, server_errors: _errors, ...rest } = await database.dump();
  const empty = (row: string) => {
    const usage = JSON.parse(row) as { used: number; reserved: number };
    return usage.used === 0 && usage.reserved === 0;
  };
  return { ...rest, plan_usage: rest.plan_usage.filter((row) => !empty(row)) };
}

/** The account's money as the server's services report it (this period's usage, by its clock), with its whole ledger (oldest first). */
export async function billingState(server: { services: Services }, accountId: string) {
  const { usage } = (await server.services.accounts.summary(accountId))!;
  return {
    balanceMicro: usage.balanceMicro,
    reservedMicro: usage.reservedMicro,
    used: usage.used,
    reserved: usage.reserved,
    entries: (await server.services.accounts.entries(accountId, { limit: 500 })).reverse(),
  };
}

export const BILLING_HEADERS = [
  "x-billed-to",
  "x-plan-usage",
  "x-balance-remaining",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "retry-after",
] as const;

/** The billing and rate-limit headers of a response (null when absent), for one toEqual. */
export function billingHeadersOf(response: CapturedResponse): Record<(typeof BILLING_HEADERS)[number], string | null> {
  return Object.fromEntries(BILLING_HEADERS.map((name) => [name, response.headers.get(name)])) as Record<(typeof BILLING_HEADERS)[number], string | null>;
}

/** A judgment request with `questions` yes/no questions on `state`. */
export function judgmentBody(questions: number, state = "I was charged twice for one order.") {
  return {
    state,
    questions: Object.fromEntries(Array.from({ length: questions }, (_, i) => [`q${i}`, { type: "noul", instructions: `Statement ${i} holds.` }])),
  };
}

/** Polls `condition` every 5 ms; throws with `what` after `timeoutMs`. */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: () => string, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
