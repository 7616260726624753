import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, show, type CapturedResponse } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/** GET /console and its files: served without a token, locked down by headers. */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

function expectLockedDown(response: CapturedResponse): void {
  const message = show(response);
  const csp = response.headers.get("content-security-policy") ?? "";
  expect(csp, message).toContain("default-src 'self'");
  expect(csp, message).toContain("script-src 'self'");
  expect(csp, message).toContain("frame-ancestors 'none'");
  expect(csp, `no inline script or style may be allowed\n${message}`).not.toMatch(/unsafe-inline|unsafe-eval|nonce-|sha256-|\*/);
  expect(response.headers.get("x-frame-options"), message).toBe("DENY");
  expect(response.headers.get("referrer-policy"), message).toBe("no-referrer");
  expect(response.headers.get("cache-control"), message).toBe("no-store");
  expect(response.headers.get("x-content-type-options"), message).toBe("nosniff");
  expect(response.headers.get("x-request-id"), message).toMatch(/^req_/);
}

describe("GET /console", () => {
  it("serves the page without any token, as HTML, with a strict CSP and no-store", async () => {
    const response = await call(server.url, "/console");
    expect(response.status, show(response)).toBe(200);
    expect(response.headers.get("content-type"), show(response)).toBe("text/html; charset=utf-8");
    expectLockedDown(response);
  });

  it("holds no inline script, no inline style and no external resource", async () => {
    const { text } = await call(server.url, "/console");
    const scripts = [...text.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)];
    expect(scripts.length, text).toBeGreaterThan(0);
    for (const [tag, body] of scripts) {
      expect(tag, "every script is a file").toMatch(/\ssrc="console\/[\w-]+\.js"/);
      expect(body.trim(), "no inline script").toBe("");
    }
    expect(text, "no inline style").not.toMatch(/<style|\sstyle=|\son\w+=/i);
    expect(text, "no external resource").not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("asks for the admin token in a labelled password field, not in a URL", async () => {
    const { text } = await call(server.url, "/console");
    expect(text, text).toMatch(/<label for="admin-token">Admin token<\/label>/);
    expect(text, text).toMatch(/<input id="admin-token" type="password"/);
    expect(text, "the token field must have no name, so no form submission can carry it").not.toMatch(/id="admin-token"[^>]*\sname=/);
  });
});

describe("GET /console/<file>", () => {
  const files = readdirSync(new URL("../../console/", import.meta.url)).filter((name) => /\.(js|css|svg)$/.test(name));

  it("serves each of the console's scripts, its style sheet and its icon with its type", async () => {
    expect(files, "src/console has no files").toEqual(expect.arrayContaining(["main.js", "console.css", "favicon.svg"]));
    const types: Record<string, RegExp> = { js: /^text\/javascript/, css: /^text\/css/, svg: /^image\/svg\+xml/ };
    for (const file of files) {
      const response = await call(server.url, `/console/${file}`);
      expect(response.status, show(response)).toBe(200);
      expect(response.headers.get("content-type") ?? "", show(response)).toMatch(types[file.split(".").pop()!]);
      expectLockedDown(response);
    }
  });

  it("builds DOM from data with text only: no script uses innerHTML, outerHTML, insertAdjacentHTML or document.write", async () => {
    for (const file of files.filter((name) => name.endsWith(".js"))) {
      const { text } = await call(server.url, `/console/${file}`);
      expect(text, file).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
      expect(text, `${file} must not keep anything in localStorage`).not.toMatch(/localStorage\s*[.[]/);
    }
  });

  it("answers 404 for anything else: the page's source, tests, other directories", async () => {
    for (const path of ["/console/index.html", "/console/console.browser.test.ts", "/console/..%2Fapp.ts", "/console/nope.js", "/console/"]) {
      expectErrorResponse(await call(server.url, path), 404, "not_found");
    }
  });
});
