// @lane timed: asserts on elapsed time, so it runs after everything else, beside one other timed file at most (src/testing/test-kinds.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JudgmentEngine } from "../../engine/types.js";
import { createStallingEngine, type StallingEngine } from "../../testing/stalling-engine.js";
import { readyTinyEngine, startTestServer, type TestServer } from "../../testing/server.js";

const show = (value: unknown) => JSON.stringify(value, null, 1);

interface Reply {
  status: number;
  body: any;
  ms: number;
}

async function send(server: TestServer, path: string, init: RequestInit & { key?: string | null } = {}): Promise<Reply> {
  const { key = server.key, ...rest } = init;
  const headers: Record<string, string> = { "content-type": "application/json", ...(rest.headers as Record<string, string>) };
  if (key !== null && !("authorization" in headers)) headers.authorization = `Bearer ${key}`;
  const started = performance.now();
  // A hung request fails the test instead of hanging it.
  const res = await fetch(server.url + path, { signal: AbortSignal.timeout(10_000), ...rest, headers });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: res.status, body, ms: performance.now() - started };
}

const judge = (server: TestServer, request: unknown, init: RequestInit = {}) =>
  send(server, "/v1/systemone", { method: "POST", body: JSON.stringify(request), ...init });

async function answersOf(server: TestServer, request: unknown) {
  const reply = await judge(server, request);
  expect(reply.status, show({ request, reply })).toBe(200);
  return reply.body.answers as Record<string, { probabilities?: Record<string, number>; noul?: number }>;
}

const choiceQ = (n: number, tag: string) => ({
  type: "choice",
  instructions: `Which ${tag} option fits?`,
  criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [`${tag} ${i}`, i % 3 ? `about ${tag} ${i}` : null])),
});
const noulQ = (text: string) => ({ type: "noul", instructions: text, criteria: { true: `${text} holds` } });
const scoreQ = (n: number, text: string) => ({ type: "score", instructions: text, criteria: Array.from({ length: n }, (_, i) => `level ${i}`) });

/** Twelve requests that differ in state (string, object, array) and in their questions. */
const REQUESTS = Array.from({ length: 12 }, (_, i) => ({
  state: i % 3 === 0 ? `Ticket ${i}: charged ${i} times.` : i % 3 === 1 ? { ticket: i, text: "broken item", tags: ["a", i] } : [`line ${i}`, { n: i }],
  questions: Object.fromEntries([
    [`c${i}`, choiceQ(2 + ((i * 5) % 31), `t${i}`)],
    ...(i % 2 ? [[`n${i}`, noulQ(`Statement ${i}`)]] : []),
    ...(i % 4 < 2 ? [[`s${i}`, scoreQ(2 + (i % 9), `Rate ${i}`)]] : []),
  ]),
}));

describe("concurrent requests on the real engine", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it("each of 12 concurrent requests gets exactly the answers it gets when sent alone", async () => {
    const alone: Awaited<ReturnType<typeof answersOf>>[] = [];
    for (const request of REQUESTS) alone.push(await answersOf(server, request));

    // Twice over, in a shuffled order, all in flight at once.
    const order = [...REQUESTS.keys(), ...REQUESTS.keys()].sort((a, b) => ((a * 7 + 3) % 12) - ((b * 7 + 3) % 12));
    const replies = await Promise.all(order.map((i) => judge(server, REQUESTS[i])));
    replies.forEach((reply, j) => {
      const i = order[j];
      expect(reply.status, show(reply)).toBe(200);
      expect(reply.body.answers, show({ request: REQUESTS[i], alone: alone[i], concurrent: reply.body })).toEqual(alone[i]);
    });
  });

  describe("answers are invariant through HTTP", () => {
    const STATE = { ticket: "I was charged twice.", priority: 2 };
    const TARGETS = { choice: choiceQ(5, "x"), noul: noulQ("It is urgent"), score: scoreQ(4, "How bad?") };

    for (const [kind, target] of Object.entries(TARGETS)) {
      it(`${kind}: renaming its id, adding other questions and reordering them leave its answer exactly equal`, async () => {
        const others = { other1: choiceQ(30, "y"), other2: scoreQ(10, "Other?"), other3: noulQ("Something else") };
        const variants: [string, Record<string, unknown>][] = [
          ["q", { q: target }],
          ["renamed 🎉 한국어.id-x", { "renamed 🎉 한국어.id-x": target }],
          ["q", { other1: others.other1, q: target, other2: others.other2 }],
          ["q", { other2: others.other2, other3: others.other3, other1: others.other1, q: target }],
          ["q", { q: target, other3: others.other3 }],
        ];
        const base = (await answersOf(server, { state: STATE, questions: variants[0][1] })).q;
        expect(base.probabilities ?? base.noul, show(base)).toBeDefined();
        for (const [id, questions] of variants.slice(1)) {
          const answer = (await answersOf(server, { state: STATE, questions }))[id];
          expect(answer, show({ questions: Object.keys(questions), base, answer })).toEqual(base);
        }
      });
    }

    it("the same request twice gives identical bodies except timing_ms", async () => {
      const request = { state: STATE, questions: { a: TARGETS.choice, b: TARGETS.noul, c: TARGETS.score } };
      const first = await judge(server, request);
      await judge(server, { state: "something else", questions: { z: choiceQ(40, "z") } });
      const second = await judge(server, request);
      expect(first.status, show(first)).toBe(200);
      const strip = ({ timing_ms: _timing, ...rest }: Record<string, unknown>) => rest;
      expect(strip(second.body), show({ first: first.body, second: second.body })).toEqual(strip(first.body));
      expect(JSON.stringify(strip(second.body))).toBe(JSON.stringify(strip(first.body)));
    });
  });
});

describe("while the model is busy (evaluation stalled by fault injection)", () => {
  let inner: JudgmentEngine;
  let engine: StallingEngine;
  let server: TestServer;
  beforeAll(async () => {
    inner = await readyTinyEngine();
    engine = createStallingEngine(inner);
    server = await startTestServer({ engine });
  });
  afterAll(async () => {
    engine?.releaseAll(); // never leave a request held if a test failed midway
    await server?.close();
    await inner?.close();
  });

  it("health, a malformed request and an unauthenticated request answer promptly, not queued behind the model", async () => {
    const request = REQUESTS[1];
    const expected = await answersOf(server, request);
    const stall = engine.stall();
    let busySettled = false;
    const busy = judge(server, request).finally(() => (busySettled = true));
    try {
      await stall.entered;
      const checks = {
        health: await send(server, "/health", { key: null }),
        malformed: await send(server, "/v1/systemone", { method: "POST", body: "{not json" }),
        invalid: await judge(server, { questions: { q: { type: "choice", instructions: "x", criteria: { only: null } } } }),
        unauthenticated: await judge(server, request, { headers: { authorization: "Bearer tjs_wrong_key" } }),
        noKey: await send(server, "/v1/systemone", { method: "POST", body: JSON.stringify(request), key: null }),
        models: await send(server, "/v1/models", { key: null }),
      };
      const statuses = Object.fromEntries(Object.entries(checks).map(([k, r]) => [k, r.status]));
      expect(statuses, show(checks)).toEqual({ health: 200, malformed: 400, invalid: 400, unauthenticated: 401, noKey: 401, models: 200 });
      for (const [name, reply] of Object.entries(checks)) expect(reply.ms, `${name} took ${reply.ms} ms: ${show(reply)}`).toBeLessThan(1000);
      expect(checks.health.body, show(checks.health)).toMatchObject({ status: "ok", model: inner.modelId });
      expect(busySettled, "the stalled request must still be waiting").toBe(false);
    } finally {
      stall.release();
    }
    const done = await busy;
    expect(done.status, show(done)).toBe(200);
    expect(done.body.answers, show({ expected, done })).toEqual(expected);
  });

  it("a client that disconnects while its request waits for the model does not break the next requests", async () => {
    const [aborted, next, queued] = [REQUESTS[2], REQUESTS[3], REQUESTS[4]];
    const expectedNext = await answersOf(server, next);
    const expectedQueued = await answersOf(server, queued);
    const logLinesBefore = server.logLines.length;

    const stall = engine.stall();
    const controller = new AbortController();
    let queuedReply: Promise<Reply>;
    try {
      const abortedReply = judge(server, aborted, { signal: controller.signal }).then(
        (reply) => ({ reply }),
        (error: unknown) => ({ error: String(error) }),
      );
      await stall.entered;
      // A second request queued behind the one whose client will vanish.
      queuedReply = judge(server, queued);
      await waitFor(() => stall.waiting === 2, "both requests waiting at the stall");
      controller.abort();
      const outcome = await abortedReply;
      expect(outcome, show(outcome)).toHaveProperty("error");
      await new Promise((resolve) => setTimeout(resolve, 100)); // let the server see the closed connection
    } finally {
      stall.release();
    }

    const queuedDone = await queuedReply;
    expect(queuedDone.status, show(queuedDone)).toBe(200);
    expect(queuedDone.body.answers, show({ expectedQueued, queuedDone })).toEqual(expectedQueued);
    const nextDone = await judge(server, next);
    expect(nextDone.status, show(nextDone)).toBe(200);
    expect(nextDone.body.answers, show({ expectedNext, nextDone })).toEqual(expectedNext);

    // And the server keeps answering everything correctly afterwards.
    for (const [i, request] of [
      [2, aborted],
      [3, next],
    ] as const) {
      const again = await judge(server, request);
      expect(again.status, show({ i, again, log: server.logLines.slice(logLinesBefore) })).toBe(200);
    }
    expect(await answersOf(server, next), "next request after recovery").toEqual(expectedNext);
  });

  it("a request whose client disconnected still leaves its access-log line", async () => {
    const accessLines = () => server.logLines.filter((l) => l.includes('"message":"request"') && l.includes('"path":"/v1/systemone"'));
    const before = accessLines().length;
    const stall = engine.stall();
    const controller = new AbortController();
    try {
      const abortedReply = judge(server, REQUESTS[5], { signal: controller.signal }).catch((error: unknown) => String(error));
      await stall.entered;
      controller.abort();
      await abortedReply;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      stall.release();
    }
    // The engine runs one request at a time: once this one is answered, the aborted one is done.
    const after = await judge(server, REQUESTS[6]);
    expect(after.status, show(after)).toBe(200);
    const lines = accessLines().slice(before);
    expect(lines.length, `access-log lines for the aborted request and the next one:\n${lines.join("")}`).toBe(2);
  });
});

async function waitFor(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
