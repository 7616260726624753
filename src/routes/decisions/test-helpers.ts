import { expect } from "vitest";
import { postWithKey, show, type CapturedResponse, type Caller } from "../../testing/http-client.js";
import { expectRequestId } from "../../testing/route-assertions.js";
import { decisionsErrorType } from "./errors.js";

/** Route tests of POST /v1/decisions: a client and the assertions on its error shape. */

/** POST /v1/decisions (see postWithKey). */
export const postDecisions = (server: Caller, body: unknown, options?: Parameters<typeof postWithKey>[3]) =>
  postWithKey(server, "/v1/decisions", body, options);

/** The status, JSON, exactly `{"error": {message, type, param, code}}` with the status's type, and a request id. */
export function expectDecisionsError(response: CapturedResponse, status: number, code?: string, param?: string | null): void {
  const message = show(response);
  expect(response.status, message).toBe(status);
  expect(response.headers.get("content-type") ?? "", message).toMatch(/^application\/json/);
  expect(Object.keys(response.json ?? {}), `the body is {"error": {…}} and nothing else\n${message}`).toEqual(["error"]);
  const error = response.json.error;
  expect(Object.keys(error ?? {}).sort(), message).toEqual(["code", "message", "param", "type"]);
  expect(typeof error.message === "string" && error.message.trim() !== "", `message must say something\n${message}`).toBe(true);
  expect(error.type, message).toBe(decisionsErrorType(status));
  expect(error.param === null || typeof error.param === "string", `param is a string or null\n${message}`).toBe(true);
  if (code !== undefined) expect(error.code, message).toBe(code);
  if (param !== undefined) expect(error.param, message).toBe(param);
  expectRequestId(response);
}

/** A Decisions request with `count` predicates about `input`. */
export function decisionsBody(count: number, input = "I was charged twice for one order.") {
  return {
    model: "gpt-6-luna",
    input,
    questions: Array.from({ length: count }, (_, i) => ({ type: "predicate", instructions: `Statement ${i} holds.` })),
  };
}
