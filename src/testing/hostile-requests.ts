/**
 * A seeded generator of invalid and hostile requests to the service, each with the statuses it
 * may get. None of them may be answered, billed or held: each is wrong in at least one way the
 * service checks before it asks the model (authentication, encoding, JSON, schema, limits,
 * Idempotency-Key, route), however plausible the rest of it is.
 */

import { mulberry32 } from "../bench/random.js";

export type Random = () => number;

/** The bench's mulberry32: the same sequence for the same seed on every machine. */
export const seededRandom: (seed: number) => Random = mulberry32;

export interface HostileRequest {
  /** What makes it wrong, for the failure message. */
  what: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** The statuses a correct server may answer with. */
  expected: number[];
}

const pick = <T>(r: Random, items: readonly T[]): T => items[Math.floor(r() * items.length)];
const int = (r: Random, min: number, max: number) => min + Math.floor(r() * (max - min + 1));

const TEXTS = [
  "I was charged twice.",
  "",
  "  ",
  "é😀\u0000\u200b\ud7ff",
  "a".repeat(2000),
  '{"looks": "like json"}',
  "<script>alert(1)</script>",
  "'; DROP TABLE accounts; --",
  '\\\\"\n\t',
];
const KEYS = ["__proto__", "constructor", "toString", "q", "🎉", " ", "a.b", "0", "hasOwnProperty"];

function randomContent(r: Random, depth = 0): unknown {
  const kind = depth > 3 ? pick(r, ["text", "number", "literal"]) : pick(r, ["text", "text", "object", "array", "number", "literal"]);
  if (kind === "text") return pick(r, TEXTS);
  if (kind === "number") return pick(r, [0, -1, 1.5, 1e300, Number.MAX_SAFE_INTEGER, -0]);
  if (kind === "literal") return pick(r, [true, false, null]);
  const size = int(r, 0, 4);
  if (kind === "array") return Array.from({ length: size }, () => randomContent(r, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = 0; i < size; i++)
    Object.defineProperty(out, pick(r, KEYS), { value: randomContent(r, depth + 1), enumerable: true, configurable: true, writable: true });
  return out;
}

const statement = (r: Random) => pick(r, [randomContent(r), "It is about billing.", null]);

function validQuestion(r: Random): Record<string, unknown> {
  switch (pick(r, ["choice", "noul", "score"])) {
    case "choice":
      return {
        type: "choice",
        instructions: statement(r),
        criteria: Object.fromEntries(Array.from({ length: int(r, 2, 6) }, (_, i) => [`${pick(r, KEYS)}${i}`, statement(r)])),
      };
    case "noul":
      return {
        type: "noul",
        instructions: statement(r),
        criteria: pick(r, [undefined, null, { true: statement(r) }, { false: statement(r), true: statement(r) }]),
      };
    default:
      return { type: "score", instructions: statement(r), criteria: Array.from({ length: int(r, 2, 10) }, () => statement(r)) };
  }
}

/** A request body the service would answer (and bill), before it is broken. */
export function validBody(r: Random): Record<string, unknown> {
  const questions = Object.fromEntries(Array.from({ length: int(r, 1, 3) }, (_, i) => [`${pick(r, KEYS)}-${i}`, validQuestion(r)]));
  return {
    state: pick(r, [randomContent(r), "I was charged twice.", null]),
    questions,
    ...(r() < 0.3 ? { model: "jev-latest" } : {}),
    ...(r() < 0.3 ? { include_logits: true } : {}),
  };
}

/** Ways to make a valid body invalid JSON: the service must answer 400. */
const BREAK_JSON: ((text: string, r: Random) => string | Uint8Array)[] = [
  (text, r) => text.slice(0, int(r, 0, text.length - 1)),
  (text) => `${text}}`,
  (text) => `[${text}`,
  (text) => text.replace('"state"', '"st\u0001ate"'),
  (text) => text.replace('"state":', '"state" '),
  (text) => `// a comment\n${text}`,
  (text) => text.replace("{", "{'single': 'quotes', "),
  (text) => text.replace('"state":', '"state": NaN, "x":'),
  (text) => text.replace('"state":', '"state": undefined, "x":'),
  (text) => `${text.slice(0, -1)},}`,
  () => "",
  () => " \n\t ",
  () => "\ufeff",
  (text) => Buffer.concat([Buffer.from(text.slice(0, 10)), Buffer.from([0xff, 0xfe, 0xc0, 0x80]), Buffer.from(text.slice(10))]),
  (text) => Buffer.from(text, "utf16le"),
];

/** Ways to make a valid body a valid JSON value the service must refuse (400). */
const BREAK_SCHEMA: ((body: Record<string, unknown>, r: Random) => unknown)[] = [
  (_, r) => pick(r, [[], "a string", 42, null, true, [{ questions: {} }]]),
  (body) => ({ ...body, questions: undefined }),
  (body) => ({ ...body, questions: {} }),
  (body, r) => ({ ...body, questions: pick(r, [[], "q", 5, null, true, [validQuestion(r)]]) }),
  (body, r) => ({ ...body, questions: { q: { ...validQuestion(r), type: pick(r, ["Choice", "bool", "", 1, null, "noul "]) } } }),
  (body) => ({ ...body, questions: { q: { type: "choice", instructions: "x", criteria: { only: null } } } }),
  (body) => ({
    ...body,
    questions: { q: { type: "choice", instructions: "x", criteria: Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`o${i}`, null])) } },
  }),
  (body, r) => ({ ...body, questions: { q: { type: "choice", instructions: "x", criteria: pick(r, [[], "a", 3, null, ["a", "b"]]) } } }),
  (body, r) => ({ ...body, questions: { q: { type: "score", instructions: "x", criteria: pick(r, [["one"], Array(11).fill("l"), {}, "abc", null]) } } }),
  (body) => ({ ...body, questions: { q: { type: "noul", instructions: "x", criteria: { maybe: "x" } } } }),
  (body, r) => ({ ...body, questions: { q: { type: "noul", instructions: pick(r, [5, true, undefined]) } } }),
  (body, r) => ({
    ...body,
    questions: { q: { type: "choice", instructions: "x", criteria: { "": "empty key", b: null } }, ...(r() < 0.5 ? {} : { "": validQuestion(r) }) },
  }),
  (body, r) => ({ ...body, questions: { "": validQuestion(r) } }),
  (body, r) => ({ ...body, state: pick(r, [5, true, -1.5]) }),
  (body, r) => ({ ...body, model: pick(r, [123, "gpt-4", "", "JEV-LATEST", null]) }),
  (body, r) => ({ ...body, include_logits: pick(r, ["yes", 1, null, "true"]) }),
  (body, r) => ({ ...body, questions: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`q${i}`, validQuestion(r)])) }),
  (body) => ({ ...body, state: JSON.parse(`${"[".repeat(70)}${"]".repeat(70)}`) }),
  (body) => ({ ...body, state: JSON.parse(`${'{"a":'.repeat(70)}1${"}".repeat(70)}`) }),
];

const BAD_AUTHORIZATION = [
  "",
  "Bearer",
  "Bearer ",
  "Basic dXNlcjpwYXNz",
  "bearer tjs_" + "0".repeat(40),
  "Bearer tjs_short",
  "Bearer a b",
  "Token tjs_x",
  "Bearer " + "x".repeat(8000),
  "Bearer \u00e9\u00ff",
];
const ENCODINGS = ["gzip", "deflate", "br", "zstd", "compress", "x-gzip", "gzip, deflate", "identity, br", "*", "unknown"];
// What an HTTP client library lets through; control characters go over a raw socket (hostileBytes).
const BAD_IDEMPOTENCY = ["", " ", "has space", "x".repeat(256), "tab\there", "é", "\u00ff\u00fe"];
const CONTENT_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=utf-16",
  "",
  "application/xml",
  "*/*",
];
const ODD_PATHS: [string, string, number[]][] = [
  ["GET", "/v1/systemone", [404]],
  ["PUT", "/v1/systemone", [404]],
  ["DELETE", "/v1/systemone", [404]],
  ["PATCH", "/v1/systemone", [404]],
  ["POST", "/v1/systemone/", [404]],
  ["POST", "/V1/SYSTEMONE", [404]],
  // A NUL anywhere in the URL is refused before routing (http/nul-bytes.ts).
  ["POST", "/v1/systemone%00", [400]],
  ["POST", "/v1/../v1/systemone%2f", [404]],
  ["GET", "/admin/v1/accounts", [404]],
  ["POST", "/admin/v1/plans", [404]],
  ["GET", "/admin/v1/ledger/check", [404]],
  ["GET", "/metrics", [404]],
  ["GET", "/console", [404]],
  ["GET", "/" + "a/".repeat(500), [404]],
  ["OPTIONS", "/v1/systemone", [404]],
];

const NUL = "\u0000";

/** Admin requests with a NUL in an id, a query or a body field (PostgreSQL cannot store one): each a 400. */
const ADMIN_NUL: [string, string, unknown?][] = [
  ["GET", "/admin/v1/accounts/%00"],
  ["GET", "/admin/v1/accounts/acct_%00/ledger?limit=5"],
  ["POST", "/admin/v1/accounts/%00/top-ups", { amount: "1.00", note: "n" }],
  ["POST", "/admin/v1/accounts/%00/adjustments", { amount: "-1", note: "n" }],
  ["PUT", "/admin/v1/accounts/acct_x%00/plan", { plan: "default" }],
  ["GET", "/admin/v1/audit?account=%00"],
  ["GET", "/admin/v1/accounts?search=%00&limit=5"],
  ["GET", "/admin/v1/accounts/%00/ledger.csv"],
  ["POST", "/admin/v1/admin-tokens", { name: `ops${NUL}` }],
  ["POST", "/admin/v1/admin-tokens/adm_%00/revoke"],
  ["POST", "/admin/v1/accounts", { name: `a${NUL}` }],
  ["POST", "/admin/v1/plans", { name: `p${NUL}`, requests_per_minute: 1, allowance_questions: 1, price_per_million: "1" }],
  ["PATCH", "/admin/v1/plans/%00", { requests_per_minute: 1 }],
  ["POST", "/admin/v1/keys/key_%00/revoke"],
  ["PATCH", "/admin/v1/keys/%00", { name: "k" }],
];

/** One hostile request for the account's `key`; with `adminToken`, admin requests carrying a NUL too. */
export function hostileRequest(r: Random, key: string, adminToken?: string): HostileRequest {
  const base = validBody(r);
  const text = JSON.stringify(base);
  const json = { "content-type": "application/json" };
  const auth = { authorization: `Bearer ${key}` };
  // Bodies over the limit are few: each is a quarter of a megabyte to send.
  const kinds = ["json", "json", "schema", "schema", "schema", "auth", "encoding", "idempotency", "type", "path", "headers", ...(adminToken ? ["nul"] : [])];
  const kind = r() < 0.005 ? "size" : pick(r, kinds);
  switch (kind) {
    case "json":
      return {
        what: "invalid JSON",
        method: "POST",
        path: "/v1/systemone",
        headers: { ...json, ...auth },
        body: pick(r, BREAK_JSON)(text, r),
        expected: [400],
      };
    case "schema":
      return {
        what: "wrong shape",
        method: "POST",
        path: "/v1/systemone",
        headers: { ...json, ...auth },
        body: JSON.stringify(pick(r, BREAK_SCHEMA)(base, r)),
        expected: [400],
      };
    case "auth": {
      const authorization = pick(r, [...BAD_AUTHORIZATION, `Bearer ${key}x`, `Bearer ${key.slice(0, -1)}`, `Bearer ${key}, Bearer ${key}`]);
      return {
        what: `bad Authorization ${JSON.stringify(authorization.slice(0, 40))}`,
        method: "POST",
        path: "/v1/systemone",
        headers: { ...json, ...(authorization ? { authorization } : {}) },
        body: text,
        expected: [401],
      };
    }
    case "encoding":
      return {
        what: "a content encoding",
        method: "POST",
        path: "/v1/systemone",
        headers: { ...json, ...auth, "content-encoding": pick(r, ENCODINGS) },
        body: text,
        expected: [415],
      };
    case "idempotency":
      return {
        what: "a bad Idempotency-Key",
        method: "POST",
        path: "/v1/systemone",
        headers: { ...json, ...auth, "idempotency-key": pick(r, BAD_IDEMPOTENCY) },
        body: text,
        expected: [400],
      };
    case "type":
      return {
        what: "an odd content type on a broken body",
        method: "POST",
        path: "/v1/systemone",
        headers: { ...auth, "content-type": pick(r, CONTENT_TYPES) },
        body: pick(r, BREAK_JSON)(text, r),
        expected: [400],
      };
    case "path": {
      // With an admin token the console's page is served to anyone: it asks for the token itself.
      const [method, path, expected] = pick(r, adminToken ? ODD_PATHS.filter(([, path]) => path !== "/console") : ODD_PATHS);
      const token = pick(r, ["", `Bearer ${key}`, "Bearer test-admin-token-guess-0123456789"]);
      return {
        what: "an odd route",
        method,
        path,
        headers: token ? { authorization: token } : {},
        body: method === "GET" || method === "OPTIONS" ? undefined : text,
        expected,
      };
    }
    case "nul": {
      const [method, path, body] = pick(r, ADMIN_NUL);
      const headers = { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : json) };
      return { what: "a NUL in an admin request", method, path, headers, body: body === undefined ? undefined : JSON.stringify(body), expected: [400] };
    }
    case "size":
      return {
        what: "a body over 256 KB",
        method: "POST",
        path: "/v1/systemone",
        headers: { ...json, ...auth },
        body: JSON.stringify({ ...base, state: "x".repeat(int(r, 262_145, 270_000)) }),
        expected: [413],
      };
    default: {
      const many = Object.fromEntries(Array.from({ length: int(r, 20, 90) }, (_, i) => [`x-odd-${i}`, pick(r, ["", "v", "\u00e9", "a".repeat(100)])]));
      return {
        what: "many odd headers on a broken body",
        method: "POST",
        path: "/v1/systemone",
        headers: { ...many, ...json, ...auth },
        body: pick(r, BREAK_JSON)(text, r),
        expected: [400],
      };
    }
  }
}

/** Requests that are not HTTP, or not finished: written to a raw socket. */
export function hostileBytes(r: Random, key: string): { what: string; chunks: string[]; halfClose: boolean } {
  const head = (extra: string) => `POST /v1/systemone HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${extra}\r\n`;
  const body = JSON.stringify(validBody(r));
  const cases: [string, string[], boolean][] = [
    ["a truncated body, then the client stops sending", [head(`Content-Length: ${body.length}\r\n`) + body.slice(0, int(r, 0, body.length - 1))], true],
    ["random bytes", [Array.from({ length: int(r, 1, 200) }, () => String.fromCharCode(int(r, 0, 255))).join("") + "\r\n\r\n"], false],
    ["an unknown method", [`${pick(r, ["BREW", "get", "G E T", "POST\u0000"])} / HTTP/1.1\r\nHost: x\r\n\r\n`], false],
    ["a bad HTTP version", [`GET /health HTTP/${pick(r, ["9.9", "1", "x", "1.1.1"])}\r\nHost: x\r\n\r\n`], false],
    ["headers over 16 KB", [`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(int(r, 17_000, 40_000))}\r\n\r\n`], false],
    ["Content-Length and Transfer-Encoding", [head(`Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n`) + body], false],
    ["a bad chunk size", [head("Transfer-Encoding: chunked\r\n") + `${pick(r, ["zz", "-1", "ffffffffffffffffff"])}\r\n${body}\r\n0\r\n\r\n`], false],
    ["two Content-Length values", [head(`Content-Length: ${body.length}\r\nContent-Length: ${body.length + 1}\r\n`) + body], false],
    ["a negative Content-Length", [head("Content-Length: -5\r\n") + body], false],
    [
      "control characters in the Idempotency-Key",
      [head(`Idempotency-Key: a${pick(r, ["\u007f", "\u0001", "\u0000"])}b\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`) + body],
      false,
    ],
  ];
  const [what, chunks, halfClose] = pick(r, cases);
  return { what, chunks, halfClose };
}
