import { afterEach, describe, expect, it } from "vitest";
import { consoleUrl } from "./composition.js";
import { startTestServer, type TestServer } from "./testing/server.js";

/** The console's address is printed at start when an admin token turns the console on; never the token. */

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const consoleLines = (lines: string[]) => lines.map((line) => JSON.parse(line)).filter((line) => line.message === "console");

describe("the console's address at start", () => {
  it("is logged, after the listening line, with the admin token set; the address answers with the console", async () => {
    server = await startTestServer();
    const lines = consoleLines(server.logLines);
    expect(lines, server.logLines.join("\n")).toHaveLength(1);
    const { url } = lines[0];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console$/);
    expect(url).toBe(`${server.url}/console`);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Typed Judgment Service");
    expect(server.logLines.join("\n")).not.toContain("test-admin-token");
  });

  it("is not logged without an admin token (there is no console then)", async () => {
    server = await startTestServer({ adminToken: null });
    expect(consoleLines(server.logLines), server.logLines.join("\n")).toEqual([]);
  });

  it("names a browsable host for a server listening on every interface", () => {
    expect(consoleUrl("0.0.0.0", 8080)).toBe("http://localhost:8080/console");
    expect(consoleUrl("::", 8080)).toBe("http://localhost:8080/console");
    expect(consoleUrl("::1", 8080)).toBe("http://[::1]:8080/console");
    expect(consoleUrl("judge.internal", 80)).toBe("http://judge.internal:80/console");
  });
});
