import { ApiError } from "../errors.js";

/**
 * The answer to a path no route serves. The admin guard sends exactly this for requests without
 * the admin token, so the admin API cannot be told apart from a path that does not exist.
 */
export function routeNotFound(method: string, path: string): ApiError {
  return new ApiError("not_found", `no route for ${method} ${path}`);
}
