import type { MiddlewareHandler } from "hono";
import { ApiError, type ErrorCode } from "../../errors.js";
import type { AppEnv } from "../../http/context.js";

/**
 * Errors of POST /v1/decisions in the shape the OpenAI SDKs read:
 * `{"error": {"message", "type", "param", "code"}}`. The statuses and codes are the catalogue's,
 * as on /v1/systemone; `type` is the SDKs' word for the kind of failure, which follows from the
 * status (the SDKs pick their error class by status, and retry 408, 409, 429 and 5xx).
 */

export const DECISIONS_ERROR_TYPES = ["invalid_request_error", "authentication_error", "insufficient_quota", "rate_limit_error", "server_error"] as const;
export type DecisionsErrorType = (typeof DECISIONS_ERROR_TYPES)[number];

export function decisionsErrorType(status: number): DecisionsErrorType {
  if (status === 401) return "authentication_error";
  if (status === 402) return "insufficient_quota";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** An error about one field of the request, which the body names as `param`. */
export class ParamError extends ApiError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly param: string | null,
  ) {
    super(code, message);
  }
}

export interface DecisionsErrorBody {
  error: { message: string; type: DecisionsErrorType; param: string | null; code: ErrorCode };
}

export function decisionsErrorBody(error: ApiError): DecisionsErrorBody {
  const param = error instanceof ParamError ? error.param : null;
  return { error: { message: error.message, type: decisionsErrorType(error.status), param, code: error.code } };
}

/** First on the route, so that even a 401 is written in this shape (by app.onError, the one place errors are written). */
export const openAIErrorFormat: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set("errorFormat", "openai");
  await next();
};
