import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readGgufMetadata } from "../gguf/gguf-reader.js";
import { runJudge } from "./test-helpers.js";

/** `judge fixture --if-missing`, which `npm run start:fixture` runs before every start. */

const dir = mkdtempSync(join(tmpdir(), "judge-fixture-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("judge fixture --if-missing", () => {
  it("writes a missing model, then leaves an existing one alone; without the flag it writes again", async () => {
    const out = join(dir, "models", "tiny.gguf");
    const first = await runJudge(["fixture", "--preset", "tiny", "--out", out, "--if-missing"]);
    expect(first.status, JSON.stringify(first)).toBe(0);
    expect(first.stdout, JSON.stringify(first)).toMatch(/^Wrote tiny fixture model to /);
    expect(statSync(out).size).toBeGreaterThan(1000);

    // A stand-in for the file a user already has: it must come through untouched.
    writeFileSync(out, "already here");
    const second = await runJudge(["fixture", "--preset", "tiny", "--out", out, "--if-missing", "--json"]);
    expect(second.status, JSON.stringify(second)).toBe(0);
    expect(JSON.parse(second.stdout), second.stdout).toEqual({ path: out, written: false });
    expect(readFileSync(out, "utf8")).toBe("already here");

    const third = await runJudge(["fixture", "--preset", "tiny", "--out", out]);
    expect(third.status, JSON.stringify(third)).toBe(0);
    expect(statSync(out).size).toBeGreaterThan(1000);
  });

  it("is what npm run start:fixture runs, so a start does not rewrite the model", () => {
    const scripts = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).scripts as Record<string, string>;
    const [fixture] = scripts["start:fixture"].split("&&");
    expect(fixture, scripts["start:fixture"]).toMatch(/ fixture .*--if-missing/);
  });
});

describe("judge fixture --vocab", () => {
  it("writes the tiny shape with Qwen2's tokenizer taken from llama.cpp's vocabulary file", async () => {
    const out = join(dir, "tiny-qwen2.gguf");
    const run = await runJudge(["fixture", "--preset", "tiny", "--vocab", "qwen2", "--out", out, "--json"]);
    expect(run.status, JSON.stringify(run)).toBe(0);
    const written = JSON.parse(run.stdout) as { vocabSize: number; vocab: string };
    expect(written, run.stdout).toMatchObject({ vocabSize: 151_936, vocab: expect.stringMatching(/^qwen2 \(.*ggml-vocab-qwen2\.gguf\)$/) });
    const pre = (await readGgufMetadata(out)).entries.find(([key]) => key === "tokenizer.ggml.pre");
    expect(pre?.[1], JSON.stringify(pre)).toEqual({ type: 8, value: "qwen2" });
  });

  it("refuses an unknown vocabulary in one line that names the known ones", async () => {
    const run = await runJudge(["fixture", "--preset", "tiny", "--vocab", "klingon", "--out", join(dir, "k.gguf")]);
    expect(run.status, JSON.stringify(run)).toBe(1);
    expect(run.stderr, JSON.stringify(run)).toMatch(/^judge: --vocab: llama\.cpp has no vocabulary "klingon"; it has .*\bqwen2\b.*\n$/);
  });
});
