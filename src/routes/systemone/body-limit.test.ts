import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, postJudgment, show } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../testing/server.js";
import { postChunked, showStreamed, type StreamedRequestResult } from "../../testing/stream-request.js";

/** POST /v1/systemone: the 256 KB body limit, with and without Content-Length. */

const LIMIT = 256 * 1024;
const KB = 1024;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const QUESTIONS = { q: { type: "choice", instructions: "Is it?", criteria: { yes: "it is", no: "it is not" } } };
/** A valid request whose unknown `padding` field (ignored by the server) brings it to exactly `bytes`. */
const PREFIX = `{"state":"short","questions":${JSON.stringify(QUESTIONS)},"padding":"`;
const SUFFIX = `"}`;
function bodyOfSize(bytes: number): string {
  const body = PREFIX + "x".repeat(bytes - PREFIX.length - SUFFIX.length) + SUFFIX;
  expect(Buffer.byteLength(body)).toBe(bytes);
  return body;
}
const jsonHeaders = () => ({ authorization: `Bearer ${server.key}`, "content-type": "application/json" });

describe("with Content-Length", () => {
  it("a valid body just under 256 KB is answered", async () => {
    const response = await postJudgment(server, bodyOfSize(LIMIT - 100));
    expect(response.status, show(response)).toBe(200);
  });

  it("a valid body of exactly 256 KB is answered", async () => {
    const response = await postJudgment(server, bodyOfSize(LIMIT));
    expect(response.status, show(response)).toBe(200);
  });

  it("one byte over 256 KB is 413", async () => {
    expectErrorResponse(await postJudgment(server, bodyOfSize(LIMIT + 1)), 413, "body_too_large");
  });

  it("4 MB is 413", async () => {
    expectErrorResponse(await postJudgment(server, bodyOfSize(4 * KB * KB)), 413, "body_too_large");
  });

  it("a Content-Length over 256 KB is refused before the body arrives", async () => {
    // Declares 4 MB, sends only the first 16 KB: the server must answer from the header alone.
    const result = await postWithDeclaredLength(4 * KB * KB, bodyOfSize(16 * KB));
    const message = showStreamed(result, "POST with Content-Length: 4194304, 16 KB sent");
    expect(result.status, message).toBe(413);
    expect(result.headers["x-request-id"], message).toBeTruthy();
    expect(JSON.parse(result.text), message).toMatchObject({ error: expect.any(String), code: "body_too_large" });
  });
});

describe("chunked, without Content-Length", () => {
  it("over 256 KB is 413 with the error body, before the client has sent it all", async () => {
    const result = await postChunked(`${server.url}/v1/systemone`, jsonHeaders(), { prefix: PREFIX, totalBytes: 4 * KB * KB });
    const message = showStreamed(result);
    expect(result.error, message).toBeUndefined();
    expect(result.status, message).toBe(413);
    expect(String(result.headers["content-type"]), message).toMatch(/^application\/json/);
    expect(result.headers["x-request-id"], message).toBeTruthy();
    const body = JSON.parse(result.text);
    expect(typeof body.error, message).toBe("string");
    expect(body.code, message).toBe("body_too_large");
    // The server answered once it had read past the limit (~256 KB plus what was in flight),
    // instead of waiting for the whole 4 MB: a server that buffers the body only answers after
    // the last chunk (finishedWriting true, 4 MB written).
    expect(result.finishedWriting, message).toBe(false);
    expect(result.bytesWritten, message).toBeLessThan(1024 * KB);
  });

  it("just over 256 KB (ending normally) is 413", async () => {
    const result = await postChunked(`${server.url}/v1/systemone`, jsonHeaders(), {
      prefix: PREFIX,
      suffix: SUFFIX,
      totalBytes: LIMIT + 1,
    });
    const message = showStreamed(result);
    expect(result.error, message).toBeUndefined();
    expect(result.status, message).toBe(413);
    expect(JSON.parse(result.text), message).toMatchObject({ error: expect.any(String), code: "body_too_large" });
  });

  it("a valid body of exactly 256 KB is answered", async () => {
    const result = await postChunked(`${server.url}/v1/systemone`, jsonHeaders(), {
      prefix: PREFIX,
      suffix: SUFFIX,
      totalBytes: LIMIT,
    });
    const message = showStreamed(result);
    expect(result.error, message).toBeUndefined();
    expect(result.status, message).toBe(200);
    expect(JSON.parse(result.text).answers.q.type, message).toBe("choice");
  });
});

describe("after oversized requests", () => {
  it("without a key, an oversized body is 401, not 413", async () => {
    expectErrorResponse(await postJudgment(server, bodyOfSize(LIMIT + 1), { key: null }), 401);
  });

  it("the server still answers", async () => {
    for (let i = 0; i < 3; i++) {
      await postChunked(`${server.url}/v1/systemone`, jsonHeaders(), { prefix: PREFIX, totalBytes: 2 * KB * KB });
    }
    const health = await call(server.url, "/health");
    expect(health.status, show(health)).toBe(200);
    const response = await postJudgment(server, { questions: QUESTIONS });
    expect(response.status, show(response)).toBe(200);
  });
});

/** Sends a Content-Length header larger than the bytes actually written, then waits for the answer. */
async function postWithDeclaredLength(declared: number, partial: string): Promise<StreamedRequestResult> {
  const { request } = await import("node:http");
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}/v1/systemone`, {
      method: "POST",
      headers: { ...jsonHeaders(), "content-length": String(declared) },
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within 10 s to a request declaring Content-Length: ${declared}`));
    }, 10_000);
    req.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.on("response", (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (part: string) => (text += part));
      response.on("end", () => {
        clearTimeout(timer);
        req.destroy();
        resolve({ status: response.statusCode, headers: response.headers, text, bytesWritten: Buffer.byteLength(partial), finishedWriting: false });
      });
    });
    req.write(partial);
  });
}
