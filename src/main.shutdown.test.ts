import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildServices, type Services } from "./services/build.js";
import { newTestDatabase, type TestDatabase } from "./testing/databases.js";
import { postJudgment, show, type CapturedResponse } from "./testing/http-client.js";
import { cleanEnv, freePort } from "./testing/instances.js";
import { addTestAccount, testConfig } from "./testing/server.js";

/**
 * SIGTERM and SIGINT on a real process (serveUntilSignalled, as `judge serve` runs it): new
 * connections are refused at once, requests in flight may finish within
 * JUDGE_SHUTDOWN_GRACE_MS, one still running at the deadline is aborted (its hold released,
 * nothing charged), the stores are closed and the process exits 0.
 */

const repoRoot = fileURLToPath(new URL("../", import.meta.url));
const SCRIPTED = fileURLToPath(new URL("./testing/scripted-instance-process.ts", import.meta.url));
/** The scripted engine reads 100 tokens per request; the plan charges 1 µ€ per token from the balance. */
const COST_MICRO = 100;
const BALANCE_MICRO = 1_000_000;

let database: TestDatabase;
let services: Services;
let caller: { url: string; key: string };
let accountId: string;
let child: ChildProcess | undefined;

beforeAll(async () => {
  database = newTestDatabase("sqlite");
  services = await buildServices(testConfig(database));
});

afterEach(() => {
  child?.kill("SIGKILL");
  child = undefined;
});

afterAll(async () => {
  await services?.close();
  await database?.drop();
});

interface Process {
  stderr(): string;
  exited: Promise<{ code: number | null; at: number }>;
}

async function startProcess(graceMs: number): Promise<Process> {
  const account = await addTestAccount(services, { plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: BALANCE_MICRO });
  accountId = account.accountId;
  const port = await freePort();
  const settings = {
    JUDGE_DB: database.location,
    JUDGE_HOST: "127.0.0.1",
    JUDGE_PORT: String(port),
    JUDGE_SHUTDOWN_GRACE_MS: String(graceMs),
    JUDGE_LOG_LEVEL: "info",
  };
  const started = spawn(process.execPath, ["--import", "tsx", SCRIPTED], { cwd: repoRoot, env: cleanEnv(settings), stdio: ["ignore", "ignore", "pipe"] });
  child = started;
  let stderr = "";
  started.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => started.once("exit", (code) => resolve({ code, at: Date.now() })));
  caller = { url: `http://127.0.0.1:${port}`, key: account.key };
  for (
    let tries = 0;
    (await fetch(`${caller.url}/health`).then(
      (r) => r.status,
      () => 0,
    )) !== 200;
    tries++
  ) {
    if (tries > 600) throw new Error(`the process never became healthy:\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { stderr: () => stderr, exited };
}

const judge = (state: string) =>
  postJudgment(caller, { state, questions: { q: { type: "noul", instructions: "It is slow." } } }, { headers: { connection: "close" } });

async function money() {
  const summary = await services.accounts.summary(accountId);
  return { balanceMicro: summary!.usage.balanceMicro, reservedMicro: summary!.usage.reservedMicro };
}

async function untilHeld(micro: number, process: Process): Promise<void> {
  for (let tries = 0; (await money()).reservedMicro !== micro; tries++) {
    if (tries > 200) throw new Error(`never held ${micro} µ€: ${JSON.stringify(await money())}\n${process.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("shutting down on a signal", () => {
  it("finishes the request in flight, refuses new connections at once, and exits 0 as soon as it is done", async () => {
    const running = await startProcess(10_000);
    const inFlight = judge("slow:1500");
    await untilHeld(COST_MICRO, running);
    const signalled = Date.now();
    child!.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await fetch(`${caller.url}/health`).then(
      (r) => `answered ${r.status}`,
      (error: Error) => String(error.cause ?? error),
    );
    expect(refused, running.stderr()).toMatch(/ECONNREFUSED/);

    const answered = await inFlight;
    expect(answered.status, show(answered)).toBe(200);
    const { code, at } = await running.exited;
    expect(code, running.stderr()).toBe(0);
    // It waited for the request, not for the 10 s grace.
    expect(at - signalled, running.stderr()).toBeLessThan(5_000);
    expect(await money()).toEqual({ balanceMicro: BALANCE_MICRO - COST_MICRO, reservedMicro: 0 });
    expect(running.stderr(), running.stderr()).toMatch(/"message":"shutting down".*\n(.*\n)*.*"message":"stopped"/);
  });

  it("aborts a request still running at the deadline: its hold is released, nothing is charged for it, and it exits 0", async () => {
    const running = await startProcess(1_500);
    const finishing = judge("slow:500");
    const hanging = judge("hang").then(
      (response: CapturedResponse) => `answered ${show(response)}`,
      (error: Error) => `connection closed: ${String(error.cause ?? error)}`,
    );
    await untilHeld(2 * COST_MICRO, running);
    const signalled = Date.now();
    child!.kill("SIGTERM");

    const finished = await finishing;
    expect(finished.status, show(finished)).toBe(200);
    expect(await hanging, running.stderr()).toMatch(/^connection closed: /);
    const { code, at } = await running.exited;
    expect(code, running.stderr()).toBe(0);
    expect(at - signalled, running.stderr()).toBeGreaterThanOrEqual(1_500);
    expect(at - signalled, running.stderr()).toBeLessThan(1_500 + 4_000);
    expect(await money()).toEqual({ balanceMicro: BALANCE_MICRO - COST_MICRO, reservedMicro: 0 });
    expect(await services.ledger.check(), running.stderr()).toMatchObject({ ok: true });
    const warning = running
      .stderr()
      .split("\n")
      .find((line) => line.includes("aborted requests still running at the shutdown deadline"));
    expect(JSON.parse(warning ?? "{}"), running.stderr()).toMatchObject({ level: "warn", count: 1 });
  });

  it("takes the signal again within 2 s as the same stop (a wrapper's copy of it), and once more after that as an order to exit at once, 1", async () => {
    const running = await startProcess(30_000);
    const hanging = judge("hang").catch(() => undefined);
    await untilHeld(COST_MICRO, running);
    const signalled = Date.now();
    let exited = false;
    void running.exited.then(() => (exited = true));
    child!.kill("SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 300));
    child!.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(exited, `still waiting for the request in flight\n${running.stderr()}`).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, signalled + 2_300 - Date.now()));
    child!.kill("SIGINT");
    const { code, at } = await running.exited;
    expect(code, running.stderr()).toBe(1);
    expect(at - signalled, running.stderr()).toBeLessThan(2_300 + 4_000);
    await hanging;
  });

  it("exits 0 at once on SIGINT when nothing is in flight", async () => {
    const running = await startProcess(10_000);
    const signalled = Date.now();
    child!.kill("SIGINT");
    const { code, at } = await running.exited;
    expect(code, running.stderr()).toBe(0);
    expect(at - signalled, running.stderr()).toBeLessThan(2_000);
  });
});
