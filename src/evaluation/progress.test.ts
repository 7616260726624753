import { describe, expect, it } from "vitest";
import { createProgress, mapConcurrent } from "./progress.js";

describe("progress", () => {
  it("without a terminal, prints a line per 10% and a final one, with rate and time left", () => {
    let t = 0;
    const out: string[] = [];
    const progress = createProgress({ label: "eval", total: 20, write: (s) => out.push(s), tty: false, now: () => t });
    for (let i = 0; i < 20; i++) {
      t += 500;
      progress.advance();
    }
    progress.finish();
    expect(out, out.join("")).toHaveLength(10);
    expect(out[0]).toBe("eval: 2/20 requests (10%), 2.0/s, 9 s left\n");
    expect(out[9]).toBe("eval: 20/20 requests (100%), 2.0/s\n");
  });

  it("on a terminal, redraws one line in place and keeps notes on lines of their own", () => {
    let t = 0;
    const out: string[] = [];
    const progress = createProgress({ label: "calibrate", total: 3, write: (s) => out.push(s), tty: true, now: () => t });
    progress.advance();
    t += 10;
    progress.advance(); // within 100 ms of the last redraw: skipped
    progress.note("retrying after 429");
    t += 1000;
    progress.advance();
    progress.finish();
    expect(out, JSON.stringify(out)).toEqual([
      "\rcalibrate: 1/3 requests (33%), 0.0/s\x1b[K",
      "\r\x1b[Kretrying after 429\n",
      "\rcalibrate: 2/3 requests (66%), 200.0/s, 1 s left\x1b[K",
      "\rcalibrate: 3/3 requests (100%), 3.0/s\x1b[K",
      "\rcalibrate: 3/3 requests (100%), 3.0/s\x1b[K",
      "\n",
    ]);
  });
});

describe("mapConcurrent", () => {
  it("keeps input order and never runs more than the limit at once", async () => {
    let running = 0;
    let peak = 0;
    const results = await mapConcurrent([50, 10, 30, 0, 20], 2, async (ms, i) => {
      peak = Math.max(peak, ++running);
      await new Promise((resolve) => setTimeout(resolve, ms));
      running--;
      return i * 10;
    });
    expect(results).toEqual([0, 10, 20, 30, 40]);
    expect(peak).toBe(2);
  });

  it("starts nothing new after a failure and throws the first error once running work settles", async () => {
    const started: number[] = [];
    let settled = 0;
    const error = await mapConcurrent([0, 1, 2, 3, 4, 5], 2, async (i) => {
      started.push(i);
      await new Promise((resolve) => setTimeout(resolve, i === 1 ? 5 : 20));
      settled++;
      if (i === 1) throw new Error("item 1 failed");
      return i;
    }).catch((e: Error) => e);
    expect((error as Error).message).toBe("item 1 failed");
    expect(started, JSON.stringify(started)).toEqual([0, 1]);
    expect(settled).toBe(started.length);
  });
});
