// @lane timed: asserts on elapsed time, so it runs after everything else, beside one other timed file at most (src/testing/test-kinds.ts).
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tinyFixturePath } from "../../testing/fixture.js";
import { downloadHost, findModelFile } from "./model-file.js";

const dir = mkdtempSync(path.join(tmpdir(), "model-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("finding the model file", () => {
  it("takes a local file as it is", async () => {
    const fixture = await tinyFixturePath();
    expect(await findModelFile({ model: fixture, modelsDir: dir }, () => undefined)).toBe(fixture);
  });

  it("refuses a local file that does not exist, saying what to do", async () => {
    const error = await findModelFile({ model: path.join(dir, "missing.gguf"), modelsDir: dir }, () => undefined).catch((e: Error) => e);
    expect(String(error)).toMatch(/missing\.gguf does not exist; set JUDGE_MODEL to a local \.gguf file, or run `npm run start:fixture`/);
  });

  it("fails within seconds when the download host cannot be reached (offline first start)", async () => {
    // A port nothing listens on: refused at once, as a machine without internet refuses.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const reports: string[] = [];
    const started = performance.now();
    const error = await findModelFile({ model: `http://127.0.0.1:${port}/model.gguf`, modelsDir: dir }, (d) => reports.push(d)).catch((e: Error) => e);
    expect(performance.now() - started, String(error)).toBeLessThan(5_000);
    expect(String(error)).toMatch(new RegExp(`cannot download .*127\\.0\\.0\\.1:${port} cannot be reached .*No internet access\\? Set JUDGE_MODEL`));
    expect(reports.join("\n")).toMatch(/checking that http:\/\/127\.0\.0\.1:\d+ can be reached/);
  });

  it("fails after the probe timeout when the host never answers (a silent network)", async () => {
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as { port: number };
    try {
      const error = await findModelFile({ model: `http://127.0.0.1:${port}/m.gguf`, modelsDir: dir, probeTimeoutMs: 300 }, () => undefined).catch(
        (e: Error) => e,
      );
      expect(String(error)).toMatch(/cannot be reached \(no answer within 0\.3 s\)/);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("asks Hugging Face for hf: models and the URL's origin otherwise", () => {
    expect(downloadHost("hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf")).toBe("https://huggingface.co");
    expect(downloadHost("https://models.example:8443/a/b.gguf")).toBe("https://models.example:8443");
  });
});
