import { z } from "@hono/zod-openapi";
import type { ErrorCode, ErrorStatus, ErrorType } from "../errors.js";
import { ADMIN_ONLY_CODES, ERROR_STATUS, ERROR_TYPE } from "../errors.js";

/** Which codes carry which error type, written out for the document: "authentication_error: missing_api_key, invalid_api_key; …". */
function typesOf(codes: ErrorCode[]): string {
  const byType = new Map<ErrorType, ErrorCode[]>();
  for (const code of codes) byType.set(ERROR_TYPE[code], [...(byType.get(ERROR_TYPE[code]) ?? []), code]);
  return [...byType].map(([type, of]) => `${type}: ${of.join(", ")}`).join("; ");
}

/** The hosted service's error shape, carried beside `error` and `code` in every error body. */
export const errorDetail = (codes: ErrorCode[]) => {
  const types = [...new Set(codes.map((code) => ERROR_TYPE[code]))];
  return z
    .object({
      error_type: z.enum(types as [ErrorType, ...ErrorType[]]).openapi({
        description: `The hosted System One service's error type, for clients written for it. By code: ${typesOf(codes)}.`,
      }),
      message: z.string().openapi({ description: "The same text as `error`." }),
    })
    .openapi({ description: "The hosted System One service's error shape, for its clients and conformance suites." });
};

const errorSchema = (codes: ErrorCode[]) =>
  z.object({
    error: z.string().openapi({ description: "What went wrong, for people." }),
    code: z.enum(codes as [ErrorCode, ...ErrorCode[]]).openapi({ description: "Stable, for programs." }),
    detail: errorDetail(codes),
  });

const ALL_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** The public API's codes only, so its document says nothing of the admin API. */
export const PUBLIC_CODES = ALL_CODES.filter((code) => !ADMIN_ONLY_CODES.includes(code));

/** The error body of the public API. */
export const ErrorBody = errorSchema(PUBLIC_CODES).openapi("Error");

/** The error body of the admin API, whose document is its own. */
export const AdminErrorBody = errorSchema(ALL_CODES).openapi("Error");

export const requestIdHeader = {
  "x-request-id": { description: "Unique id of the request; quote it to support.", schema: { type: "string" as const } },
  "x-typesafe-request-id": {
    description: "The same id, under the name the System One SDKs read it from.",
    schema: { type: "string" as const },
  },
};

type HeaderObject = Record<string, { description: string; schema: { type: "string" } }>;

const header = (description: string) => ({ description, schema: { type: "string" as const } });

/** On every response of an authenticated request to POST /v1/systemone. */
export const rateLimitHeaders = {
  "x-ratelimit-limit": header("Requests per minute for this key's plan."),
  "x-ratelimit-remaining": header("Requests left in the current one-minute window."),
  "x-ratelimit-reset": header("Seconds until the current window ends."),
};

/** On 200s (and, without x-billed-to, on 402s): where the account stands after the request. */
export const standingHeaders = {
  "x-plan-usage": header("Share of the current period's plan allowance used, as <n>% (rounded down)."),
  "x-balance-remaining": header("Prepaid balance in euros after this request, an exact decimal."),
};

export const billedToHeader = { "x-billed-to": header("What paid for this answer: plan or balance.") };

export const retryAfterHeader = { "retry-after": header("Seconds to wait before the next attempt.") };

/** What each error of a route that answers questions means (/v1/systemone, /v1/decisions); only their 400s differ. */
export const judgingErrorDescriptions = (invalidRequest: string) => ({
  400: invalidRequest,
  401: "Missing, invalid or revoked API key (missing_api_key, invalid_api_key), a key past its expiry (key_expired), or the key's account is disabled (account_disabled).",
  402: "Plan allowance used up and prepaid balance too low (insufficient_funds), or the key's own budget reached (key_budget_exhausted); nothing is charged.",
  404: "`x_task` names no task of the key's account (task_not_found); nothing is charged.",
  409: "A request with the same Idempotency-Key is still running.",
  413: "Request body larger than 256 KB.",
  415: "The body has a Content-Encoding other than identity (unsupported_content_encoding).",
  429: "The plan's rate limit, or the key's own, exceeded (the message says which); retry after Retry-After seconds.",
  502: "The model, the database or Redis (when it counts the rate limits) is unavailable, failed or timed out (model_unavailable, model_failed, model_timeout, database_unavailable, rate_limiter_unavailable); nothing is charged.",
});

/** The headers each error of a route that answers questions carries (/v1/systemone, /v1/decisions). */
export const judgingErrorHeaders = {
  400: rateLimitHeaders,
  402: { ...rateLimitHeaders, ...standingHeaders },
  404: rateLimitHeaders,
  409: rateLimitHeaders,
  413: rateLimitHeaders,
  415: rateLimitHeaders,
  429: { ...rateLimitHeaders, ...retryAfterHeader },
  502: rateLimitHeaders,
};

export function errorResponses<S extends ErrorStatus>(
  descriptions: Record<S, string>,
  headersByStatus: Partial<Record<S, HeaderObject>> = {},
  schema: z.ZodType = ErrorBody,
) {
  type Described = { description: string; headers: HeaderObject; content: { "application/json": { schema: z.ZodType } } };
  const out = {} as Record<S, Described>;
  for (const [status, description] of Object.entries(descriptions) as unknown as [S, string][]) {
    const headers = { ...requestIdHeader, ...headersByStatus[status] };
    out[status] = { description, headers, content: { "application/json": { schema } } };
  }
  return out;
}
