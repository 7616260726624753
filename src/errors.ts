import { LimiterUnavailableError } from "./limits/types.js";
import { standingHeaders } from "./http/standing-headers.js";
import { InsufficientFundsError, KeyBudgetExhaustedError, UnknownAccountError } from "./services/errors.js";
import { JudgingRefusal } from "./services/judging/errors.js";
import { StoreError } from "./record-errors.js";
import { TaskInputError, TasksStoppingError } from "./services/tasks/errors.js";

/**
 * The one error catalogue: every error the API returns has a stable `code` from this table and
 * the body `{ "error": "<message>", "code": "<code>", "detail": { "error_type", "message" } }`
 * (see ERROR_TYPE). Only the HTTP edge turns errors into statuses; services throw their own
 * domain errors.
 */
export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_request: 400,
  unknown_model: 400,
  /**
   * The key's plan may not use the model asked for (its allowed models; docs/engines/many-models.md).
   * A 400, not a 403: the key is valid, and the client fixes it by asking for another model.
   */
  model_not_allowed: 400,
  too_many_questions: 400,
  over_budget: 400,
  invalid_idempotency_key: 400,
  idempotency_key_reused: 400,
  /** Gateway only: the request is over the upstream server's limits (options, levels, questions); nothing was sent. */
  over_upstream_limit: 400,
  /** Gateway only: the upstream refused the request itself (its 4xx); its message is quoted. */
  upstream_rejected: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  /** The key is valid but its account is disabled (`judge accounts disable`); enabling it restores the key. */
  account_disabled: 401,
  /** The key is past the expiry it was given (`judge keys create --expires`). */
  key_expired: 401,
  insufficient_funds: 402,
  /** The balance could pay, but the key's own budget cannot: what it spent and holds would pass it. */
  key_budget_exhausted: 402,
  not_found: 404,
  /** Admin API only (these three): the account, plan or key named does not exist. */
  account_not_found: 404,
  plan_not_found: 404,
  key_not_found: 404,
  /** Admin API only: no admin token with that id. */
  admin_token_not_found: 404,
  /** No task with that id or name in the key's account (another account's task is not found either). */
  task_not_found: 404,
  idempotency_key_in_use: 409,
  /** The account already has a task of that name. */
  task_exists: 409,
  /** The account has as many tasks as its quota (JUDGE_TASKS_PER_ACCOUNT). */
  task_quota_exceeded: 409,
  /** A fit of the task is running: one at a time per task. */
  fit_in_progress: 409,
  /** Admin API: another plan already has that name. */
  plan_exists: 409,
  body_too_large: 413,
  /** The body is sent in a Content-Encoding the service does not decode (only identity is read). */
  unsupported_content_encoding: 415,
  /** The HTTP server, before any route: the request line and headers, or the whole request, did not arrive in time. */
  request_timeout: 408,
  /** The HTTP server, before any route: the request line and headers are over 16 KB. */
  headers_too_large: 431,
  /** The HTTP server, before any route: not a well-formed HTTP/1.1 request (request line, a header, chunked framing). */
  malformed_request: 400,
  rate_limited: 429,
  /** nginx's convention for "the client closed the connection first"; only ever seen in logs. */
  client_closed_request: 499,
  model_unavailable: 502,
  model_failed: 502,
  model_timeout: 502,
  /** The database (SQLite or PostgreSQL) cannot be reached or did not answer in time. */
  database_unavailable: 502,
  /** Redis is configured for rate limits and cannot be reached; never counted per instance instead. */
  rate_limiter_unavailable: 502,
  service_unavailable: 503,
  internal_error: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Codes only the admin API returns; the public API's document does not list them. */
export const ADMIN_ONLY_CODES: readonly ErrorCode[] = ["account_not_found", "plan_not_found", "key_not_found", "admin_token_not_found", "plan_exists"];
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];

/**
 * The hosted System One service's error types. Its clients and the ecosystem's conformance
 * suites read `detail.error_type`. Four are the hosted service's own words for its refusals
 * (authentication_error, api_usage_error, billing_error, max_tokens_exceeded); the others are
 * the names its ecosystem's clients use where no word of the hosted service's is known.
 */
export const ERROR_TYPES = [
  "api_usage_error",
  "max_tokens_exceeded",
  "authentication_error",
  "billing_error",
  "not_found_error",
  "rate_limit_error",
  "api_error",
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

/**
 * `detail.error_type` of every code (`satisfies` makes a code without one a type error).
 * max_tokens_exceeded is the hosted service's only size refusal: a client that meets it sends
 * less, which is also the remedy for a body over the limit. Every 5xx is api_error: the
 * server's fault, and the SDKs retry it whatever its type.
 */
export const ERROR_TYPE = {
  invalid_json: "api_usage_error",
  invalid_request: "api_usage_error",
  unknown_model: "api_usage_error",
  too_many_questions: "api_usage_error",
  over_budget: "max_tokens_exceeded",
  invalid_idempotency_key: "api_usage_error",
  idempotency_key_reused: "api_usage_error",
  over_upstream_limit: "api_usage_error",
  upstream_rejected: "api_usage_error",
  missing_api_key: "authentication_error",
  invalid_api_key: "authentication_error",
  account_disabled: "authentication_error",
  key_expired: "authentication_error",
  insufficient_funds: "billing_error",
  key_budget_exhausted: "billing_error",
  model_not_allowed: "api_usage_error",
  not_found: "not_found_error",
  account_not_found: "not_found_error",
  plan_not_found: "not_found_error",
  key_not_found: "not_found_error",
  admin_token_not_found: "not_found_error",
  task_not_found: "not_found_error",
  idempotency_key_in_use: "api_usage_error",
  task_exists: "api_usage_error",
  task_quota_exceeded: "api_usage_error",
  fit_in_progress: "api_usage_error",
  plan_exists: "api_usage_error",
  body_too_large: "max_tokens_exceeded",
  unsupported_content_encoding: "api_usage_error",
  request_timeout: "api_usage_error",
  headers_too_large: "api_usage_error",
  malformed_request: "api_usage_error",
  rate_limited: "rate_limit_error",
  client_closed_request: "api_usage_error",
  model_unavailable: "api_error",
  model_failed: "api_error",
  model_timeout: "api_error",
  database_unavailable: "api_error",
  rate_limiter_unavailable: "api_error",
  service_unavailable: "api_error",
  internal_error: "api_error",
} as const satisfies Record<ErrorCode, ErrorType>;

/** The body every error carries: ours (`error`, `code`) and the hosted service's (`detail`) side by side. */
export function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { error: message, code, detail: { error_type: ERROR_TYPE[code], message } };
}

export class ApiError extends Error {
  override name = "ApiError";
  readonly status: ErrorStatus;
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Headers the error response carries, such as Retry-After on a 429. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
  body(): ErrorBody {
    return errorBody(this.code, this.message);
  }
}

export interface ErrorBody {
  error: string;
  code: ErrorCode;
  /** The hosted service's shape, for clients and suites written for it; `message` is `error`. */
  detail: { error_type: ErrorType; message: string };
}

/** Maps a thrown error to what the client sees; anything unexpected becomes a 500. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  // The engine's errors too: judging maps them to the catalogue's codes (services/judging/errors.ts).
  if (error instanceof JudgingRefusal) return new ApiError(error.code, error.clientMessage ?? error.message);
  if (error instanceof TaskInputError) return new ApiError("invalid_request", error.message);
  if (error instanceof TasksStoppingError) return new ApiError("service_unavailable", error.message);
  // The standing that explains the refusal travels with it.
  if (error instanceof InsufficientFundsError) return new ApiError("insufficient_funds", error.message, standingHeaders(error.standing));
  if (error instanceof KeyBudgetExhaustedError) return new ApiError("key_budget_exhausted", error.message, standingHeaders(error.standing));
  if (error instanceof LimiterUnavailableError) return new ApiError("rate_limiter_unavailable", `${error.message}; nothing was charged`);
  if (error instanceof UnknownAccountError) return new ApiError("invalid_api_key", "invalid or revoked API key");
  if (error instanceof StoreError) return fromStoreError(error);
  return new ApiError("internal_error", "internal error; quote the x-request-id header to support");
}

/** The store's user-facing errors, as the catalogue has them; the store knows nothing of HTTP. */
function fromStoreError(error: StoreError): ApiError {
  switch (error.code) {
    case "account_not_found":
    case "plan_not_found":
    case "plan_exists":
    case "task_not_found":
    case "task_exists":
    case "task_quota_exceeded":
    case "fit_in_progress":
      return new ApiError(error.code, error.message);
    case "account_disabled":
      return new ApiError("account_disabled", "the account of this API key is disabled; ask the service's operator");
    case "invalid_input":
    case "ambiguous_prefix":
      return new ApiError("invalid_request", error.message);
    case "database_unavailable":
      return new ApiError("database_unavailable", "the database is unavailable; nothing was charged");
    case "schema_too_new":
      return new ApiError("internal_error", "internal error; quote the x-request-id header to support");
  }
}
