import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall, TINY_JUDGMENT } from "../../testing/admin-client.js";
import { postJudgment, show } from "../../testing/http-client.js";
import { expectErrorResponse, okJson } from "../../testing/route-assertions.js";
import { newTestDatabase, type TestDatabase } from "../../testing/databases.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/**
 * Two instances on one PostgreSQL and one Redis, as behind a load balancer: a disable made
 * through one applies to the very next request on the other (keys are read with their
 * account's state on every request; nothing is cached per instance).
 */
describe("disabling an account across instances (PostgreSQL + Redis)", () => {
  let database: TestDatabase;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    database = newTestDatabase("postgres");
    const redisPrefix = `judge:test:disable:${process.pid}:${Date.now()}:`;
    a = await startTestServer({ database, redisPrefix });
    b = await startTestServer({ database, redisPrefix, engine: a.engine });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await database?.drop();
  });

  it("disable through one instance: the next request on the other gets 401; enable through it: the first answers again", async () => {
    // A's account and key, used on B: B has already authenticated it once.
    const caller = { url: b.url, key: a.key };
    const before = await postJudgment(caller, TINY_JUDGMENT);
    expect(before.status, show(before)).toBe(200);

    okJson(await adminCall(a, "POST", `/admin/v1/accounts/${a.accountId}/disable`));
    expectErrorResponse(await postJudgment(caller, TINY_JUDGMENT), 401, "account_disabled");
    expectErrorResponse(await postJudgment(a, TINY_JUDGMENT), 401, "account_disabled");

    okJson(await adminCall(b, "POST", `/admin/v1/accounts/${a.accountId}/enable`));
    const after = await postJudgment(a, TINY_JUDGMENT);
    expect(after.status, show(after)).toBe(200);
    const onB = await postJudgment(caller, TINY_JUDGMENT);
    expect(onB.status, show(onB)).toBe(200);

    const { entries } = okJson(await adminCall(b, "GET", `/admin/v1/audit?account=${a.accountId}&limit=2`));
    expect(entries.map((e: any) => e.action)).toEqual(["account.enable", "account.disable"]);
  });
});
