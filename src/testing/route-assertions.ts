import { expect } from "vitest";
import { ERROR_TYPE, type ErrorCode } from "../errors.js";
import { show, type CapturedResponse } from "./http-client.js";

/** An own property, even one named "__proto__" (plain indexing would read the prototype). */
export function own(object: unknown, key: string): any {
  if (typeof object !== "object" || object === null) return undefined;
  return Object.getOwnPropertyDescriptor(object, key)?.value;
}

/** A plain object with exactly these own keys, "__proto__" included (an object literal would set the prototype). */
export function record<T>(entries: [string, T][]): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [key, value] of entries) {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

export function expectRequestId(response: CapturedResponse): string {
  const id = response.headers.get("x-request-id");
  expect(id, `no x-request-id header\n${show(response)}`).toBeTruthy();
  expect(id!.trim(), `blank x-request-id header\n${show(response)}`).not.toBe("");
  return id!;
}

/** The status, JSON content type, `{ error, code, detail: {error_type, message} }` body and a request id. */
export function expectErrorResponse(response: CapturedResponse, status: number, code?: string): void {
  const message = show(response);
  expect(response.status, message).toBe(status);
  expect(response.headers.get("content-type") ?? "", message).toMatch(/^application\/json/);
  expect(response.json, `body is not JSON\n${message}`).toBeTypeOf("object");
  expect(response.json, message).not.toBeNull();
  expect(typeof response.json.error, `error must be a string\n${message}`).toBe("string");
  expect(response.json.error.trim(), `error must say something\n${message}`).not.toBe("");
  expect(typeof response.json.code, `code must be a string\n${message}`).toBe("string");
  if (code !== undefined) expect(response.json.code, message).toBe(code);
  // The hosted service's clients read errors from `detail`; it says the same as `error`.
  expect(response.json.detail, message).toEqual({ error_type: ERROR_TYPE[response.json.code as ErrorCode], message: response.json.error });
  expectRequestId(response);
}

/** A 200's parsed body; anything else fails with the whole response printed. */
export function okJson(response: CapturedResponse): any {
  expect(response.status, show(response)).toBe(200);
  return response.json;
}
