import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";

const repoRoot = fileURLToPath(new URL("../", import.meta.url));

function captured(level: Parameters<typeof createLogger>[0]) {
  const lines: string[] = [];
  return { lines, log: createLogger(level, (line) => lines.push(line)) };
}

describe("createLogger", () => {
  it("writes one JSON object per line: level, ISO time, the fields and the message", () => {
    const { lines, log } = captured("info");
    log.info("listening", { url: "http://127.0.0.1:8080", slots: 4, ok: true });
    expect(lines, lines.join("")).toHaveLength(1);
    expect(lines[0].endsWith("\n"), lines[0]).toBe(true);
    const line = JSON.parse(lines[0]);
    expect(line, lines[0]).toMatchObject({ level: "info", message: "listening", url: "http://127.0.0.1:8080", slots: 4, ok: true });
    expect(new Date(line.time).toISOString(), lines[0]).toBe(line.time);
  });

  it("leaves out what is below its level, and everything when silent", () => {
    const warn = captured("warn");
    warn.log.debug("d");
    warn.log.info("i");
    warn.log.warn("w");
    warn.log.error("e");
    expect(
      warn.lines.map((l) => JSON.parse(l).message),
      warn.lines.join(""),
    ).toEqual(["w", "e"]);
    const silent = captured("silent");
    silent.log.error("e");
    expect(silent.lines, silent.lines.join("")).toEqual([]);
  });

  it("puts a child's fields, such as the request id, on every line it writes", () => {
    const { lines, log } = captured("debug");
    const request = log.child({ request_id: "req_1" });
    request.debug("a");
    request.error("b", { code: "model_failed" });
    log.info("c");
    expect(
      lines.map((l) => JSON.parse(l).request_id),
      lines.join(""),
    ).toEqual(["req_1", "req_1", undefined]);
  });

  it("drops fields named like secrets or user data, whoever passes them", () => {
    const { lines, log } = captured("info");
    log.child({ token: "t-secret" }).info("m", { key: "k-secret", authorization: "Bearer b-secret", state: "s-secret", body: "x-secret", kept: 1 });
    expect(lines[0], lines[0]).not.toMatch(/secret|token|authorization|"key"|"state"|"body"/);
    expect(JSON.parse(lines[0]).kept, lines[0]).toBe(1);
  });

  it("writes to stderr at once, while the process is busy and right before it exits", async () => {
    // The child logs, then blocks its event loop for 3 s: a buffered or asynchronous
    // destination would hold the line until then. It logs again and exits at once.
    const script = [
      `import { createLogger } from "./src/logger.ts";`,
      `const log = createLogger("info");`,
      `log.info("first");`,
      `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000);`,
      `log.info("last");`,
      `process.exit(0);`,
    ].join("\n");
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: repoRoot });
    let stderr = "";
    const started = Date.now();
    let firstAt: number | undefined;
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      if (firstAt === undefined && stderr.includes('"message":"first"')) firstAt = Date.now() - started;
    });
    const exitedAt = await new Promise<number>((resolve) => child.on("close", () => resolve(Date.now() - started)));
    expect(firstAt, stderr).toBeDefined();
    expect(exitedAt - firstAt!, `the first line came ${firstAt} ms after start, the exit at ${exitedAt} ms:\n${stderr}`).toBeGreaterThan(2_000);
    expect(stderr, stderr).toContain('"message":"last"');
  });
});
