import { OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { hangingEngine } from "../../testing/hanging-engine.js";
import { call, show } from "../../testing/http-client.js";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../../testing/server.js";

/**
 * The OpenAPI documents need no key (the public one) and cost tens of ms of CPU to generate, so
 * each is generated once and served from the same bytes: builds are counted where the library
 * generates a document, not timed.
 */

let server: TestServer;
const builds = vi.spyOn(OpenApiGeneratorV31.prototype, "generateDocument");
beforeAll(async () => {
  server = await startTestServer({ engine: hangingEngine() });
});
afterAll(async () => {
  builds.mockRestore();
  await server?.close();
});

describe.each([
  ["/openapi.json", {}],
  ["/admin/openapi.json", { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }],
])("GET %s", (path, credentials) => {
  const get = (path: string, headers: Record<string, string> = {}) => call(server.url, path, { headers: { ...credentials, ...headers } });
  it("is generated at the first request only; later ones get the same bytes and ETag", async () => {
    const before = builds.mock.calls.length;
    const first = await get(path);
    expect(first.status, show(first)).toBe(200);
    expect(builds.mock.calls.length - before, "builds at the first request").toBe(1);
    const etag = first.headers.get("etag");
    expect(etag, show(first)).toMatch(/^"[\w-]{27}"$/);
    for (let i = 0; i < 5; i++) {
      const again = await get(path);
      expect(again.status, show(again)).toBe(200);
      expect(again.text).toBe(first.text);
      expect(again.headers.get("etag")).toBe(etag);
      expect(again.headers.get("content-type") ?? "").toMatch(/^application\/json/);
    }
    expect(builds.mock.calls.length - before, "builds after six requests").toBe(1);
  });

  it("answers 304 with no body to If-None-Match naming its ETag, 200 to any other tag", async () => {
    const etag = (await get(path)).headers.get("etag")!;
    for (const tag of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const revalidated = await get(path, { "if-none-match": tag });
      expect(revalidated.status, `${tag}: ${show(revalidated)}`).toBe(304);
      expect(revalidated.text).toBe("");
      expect(revalidated.headers.get("etag")).toBe(etag);
    }
    const stale = await get(path, { "if-none-match": '"an-older-one"' });
    expect(stale.status, show(stale)).toBe(200);
  });
});
