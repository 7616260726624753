import { describe, expect, it } from "vitest";
import { deadline } from "./deadline.js";

describe("a request step's deadline", () => {
  it("aborts when the time runs out, and says it was the time", async () => {
    const client = new AbortController();
    const step = deadline(client.signal, 20);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect({ aborted: step.signal.aborted, timedOut: step.timedOut }).toEqual({ aborted: true, timedOut: true });
    step.dispose();
  });

  it("aborts when the client leaves, and says it was not the time", () => {
    const client = new AbortController();
    const step = deadline(client.signal, 10_000);
    client.abort();
    expect({ aborted: step.signal.aborted, timedOut: step.timedOut }).toEqual({ aborted: true, timedOut: false });
    step.dispose();
  });

  it("stays the client's leaving when the time then runs out too", async () => {
    const client = new AbortController();
    const step = deadline(client.signal, 20);
    client.abort();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect({ aborted: step.signal.aborted, timedOut: step.timedOut }).toEqual({ aborted: true, timedOut: false });
    step.dispose();
  });

  it("is aborted from the start for a client already gone", () => {
    const client = new AbortController();
    client.abort();
    const step = deadline(client.signal, 10_000);
    expect(step.signal.aborted).toBe(true);
    step.dispose();
  });

  it("once disposed, neither the time nor the client aborts it", async () => {
    const client = new AbortController();
    const step = deadline(client.signal, 20);
    step.dispose();
    client.abort();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect({ aborted: step.signal.aborted, timedOut: step.timedOut }).toEqual({ aborted: false, timedOut: false });
  });
});
