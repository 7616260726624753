import { describe, expect, it } from "vitest";
import { createSerialQueue } from "./serial-queue.js";

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every queued microtask and a macrotask turn run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("createSerialQueue", () => {
  it("runs tasks one at a time, in arrival order, each starting only after the previous settled", async () => {
    const queue = createSerialQueue();
    const events: string[] = [];
    const gates = [deferred<string>(), deferred<string>(), deferred<string>()];
    let running = 0;
    let maxRunning = 0;
    const results = gates.map((gate, i) =>
      queue.run(async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        events.push(`start ${i}`);
        try {
          return await gate.promise;
        } finally {
          events.push(`end ${i}`);
          running--;
        }
      }),
    );

    await settle();
    expect(events, JSON.stringify(events)).toEqual(["start 0"]);
    // Finishing a later task first must not let it (or anything) jump the queue.
    gates[2].resolve("c");
    await settle();
    expect(events, JSON.stringify(events)).toEqual(["start 0"]);
    gates[0].resolve("a");
    await settle();
    expect(events, JSON.stringify(events)).toEqual(["start 0", "end 0", "start 1"]);
    gates[1].resolve("b");

    expect(await Promise.all(results)).toEqual(["a", "b", "c"]);
    expect(events, JSON.stringify(events)).toEqual(["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]);
    expect(maxRunning).toBe(1);
  });

  it("keeps arrival order for many tasks queued synchronously", async () => {
    const queue = createSerialQueue();
    const order: number[] = [];
    const results = Array.from({ length: 50 }, (_, i) =>
      queue.run(async () => {
        // Later tasks finish faster, so any overlap would reorder the log.
        await new Promise((resolve) => setTimeout(resolve, (50 - i) % 3));
        order.push(i);
        return i * 2;
      }),
    );
    expect(await Promise.all(results)).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
    expect(order).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it("a failing task rejects to its own caller and does not block the next task", async () => {
    const queue = createSerialQueue();
    const failure = new Error("task failed");
    const first = queue.run(async () => {
      throw failure;
    });
    const second = queue.run(async () => "second ran");
    await expect(first).rejects.toBe(failure);
    await expect(second).resolves.toBe("second ran");
  });

  it("a task that throws synchronously is treated like a rejected one", async () => {
    const queue = createSerialQueue();
    const first = queue.run((() => {
      throw new Error("sync throw");
    }) as () => Promise<never>);
    const second = queue.run(async () => 42);
    await expect(first).rejects.toThrow("sync throw");
    await expect(second).resolves.toBe(42);
  });

  it("a failing task in the middle neither stops the later ones nor changes their order", async () => {
    const queue = createSerialQueue();
    const order: string[] = [];
    const a = queue.run(async () => void order.push("a"));
    const b = queue.run(async () => {
      order.push("b");
      throw new Error("b failed");
    });
    const c = queue.run(async () => void order.push("c"));
    const outcomes = await Promise.allSettled([a, b, c]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(order).toEqual(["a", "b", "c"]);
  });

  it("pending counts queued plus running tasks, and drops as each settles (also on failure)", async () => {
    const queue = createSerialQueue();
    expect(queue.pending).toBe(0);
    const gates = [deferred(), deferred(), deferred()];
    const results = gates.map((gate) => queue.run(() => gate.promise));
    expect(queue.pending).toBe(3);

    gates[0].resolve();
    await results[0];
    expect(queue.pending).toBe(2);

    gates[1].reject(new Error("failed"));
    await expect(results[1]).rejects.toThrow("failed");
    expect(queue.pending).toBe(1);

    const late = queue.run(async () => "late");
    expect(queue.pending).toBe(2);

    gates[2].resolve();
    await results[2];
    expect(queue.pending).toBe(1);
    await late;
    expect(queue.pending).toBe(0);
  });

  it("is usable again after it has drained", async () => {
    const queue = createSerialQueue();
    await queue.run(async () => 1);
    await settle();
    expect(queue.pending).toBe(0);
    await expect(queue.run(async () => "again")).resolves.toBe("again");
    expect(queue.pending).toBe(0);
  });
});
