import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildServices, type Services } from "./services/build.js";
import { newTestDatabase, type TestDatabase } from "./testing/databases.js";
import { postJudgment } from "./testing/http-client.js";
import { cleanEnv, freePort } from "./testing/instances.js";
import { addTestAccount, testConfig } from "./testing/server.js";

/**
 * Orchestrators kill at 10 s (`docker stop`, Kubernetes' default is 30 s but many set 10): with
 * the default settings a signalled process has finished everything and exited 0 before then,
 * even with a request that never ends and a model that takes 20 s to tear down.
 */

const repoRoot = fileURLToPath(new URL("../", import.meta.url));
const SCRIPTED = fileURLToPath(new URL("./testing/scripted-instance-process.ts", import.meta.url));

let database: TestDatabase;
let services: Services;
beforeAll(async () => {
  database = newTestDatabase("sqlite");
  services = await buildServices(testConfig(database));
});
afterAll(async () => {
  await services?.close();
  await database?.drop();
});

it("exits 0 within 10 s of SIGTERM by default, a request hanging and the model slow to close; the hold is released", async () => {
  const account = await addTestAccount(services, { plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 1_000_000 });
  const port = await freePort();
  const settings = { JUDGE_DB: database.location, JUDGE_HOST: "127.0.0.1", JUDGE_PORT: String(port), JUDGE_LOG_LEVEL: "info" };
  const child = spawn(process.execPath, ["--import", "tsx", SCRIPTED, "--close-ms", "20000"], {
    cwd: repoRoot,
    env: cleanEnv(settings),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.once("exit", (code) => resolve({ code, at: Date.now() })));
  try {
    const url = `http://127.0.0.1:${port}`;
    for (
      let tries = 0;
      (await fetch(`${url}/health`).then(
        (r) => r.status,
        () => 0,
      )) !== 200;
      tries++
    ) {
      if (tries > 600) throw new Error(`the process never became healthy:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const hanging = postJudgment({ url, key: account.key }, { state: "hang", questions: { q: { type: "noul", instructions: "x" } } }).catch(() => undefined);
    for (let tries = 0; (await services.accounts.summary(account.accountId))!.usage.reservedMicro === 0; tries++) {
      if (tries > 200) throw new Error(`the request was never held:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const signalled = Date.now();
    child.kill("SIGTERM");
    const { code, at } = await exited;
    await hanging;
    expect(code, stderr).toBe(0);
    expect(at - signalled, stderr).toBeLessThan(10_000);
    expect((await services.accounts.summary(account.accountId))!.usage, stderr).toMatchObject({ balanceMicro: 1_000_000, reservedMicro: 0 });
  } finally {
    child.kill("SIGKILL");
  }
}, 30_000);
