import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall } from "../../testing/admin-client.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { show } from "../../testing/http-client.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/**
 * Each balance is capped at 2^53 − 1 µ€ (the exact range of a JavaScript number), the sum of a
 * month's top-ups across accounts is not: the overview adds them exactly and answers 200, never
 * a 500 for data the service accepted.
 */

const MAX = Number.MAX_SAFE_INTEGER; // 9007199254740991 µ€ = €9,007,199,254.740991

describe.each(STORE_ENGINES)("on %s", (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ store: engine });
    for (const name of ["whale one", "whale two", "whale three"]) {
      const account = await adminCall(server, "POST", "/admin/v1/accounts", { body: { name } });
      const topUp = await adminCall(server, "POST", `/admin/v1/accounts/${account.json.id}/top-ups`, { body: { amount: "9007199254.740991" } });
      expect(topUp.status, show(topUp)).toBe(201);
    }
  });
  afterAll(async () => {
    await server?.close();
  });

  it("adds a month's top-ups past 2^53 µ€ exactly: 200, the euros as an exact decimal and µ€ as an exact JSON integer", async () => {
    const response = await adminCall(server, "GET", "/admin/v1/overview");
    expect(response.status, show(response)).toBe(200);
    // The µ€ figure is written as the exact integer literal, which a BigInt-aware parser reads back.
    const literal = /"month":\{[^}]*"topped_up_micro":(\d+)/.exec(response.text)?.[1];
    expect(literal, show(response)).toBeDefined();
    const micro = BigInt(literal!);
    // The three whales, and whatever the test server's own account was given.
    const others = micro - 3n * BigInt(MAX);
    expect(others >= 0n && others <= BigInt(MAX), show(response)).toBe(true);
    expect(response.json.month.topped_up, show(response)).toBe(eurosOf(micro));
    // Today's bar of the 30-day chart holds the same sum, exactly, past 2^53 too.
    const days = [...response.text.matchAll(/"topped_up_micro":(\d+),"topped_up":"([\d.]+)","server_errors"/g)];
    expect(days, show(response)).toHaveLength(30);
    expect([BigInt(days.at(-1)![1]), days.at(-1)![2]], show(response)).toEqual([micro, eurosOf(micro)]);
  });
});

function eurosOf(micro: bigint): string {
  const whole = micro / 1_000_000n;
  const fraction = (micro % 1_000_000n)
    .toString()
    .padStart(6, "0")
    .replace(/0{1,4}$/, "");
  return `${whole}.${fraction}`;
}
