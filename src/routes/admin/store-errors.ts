import { ApiError } from "../../errors.js";
import { StoreError } from "../../store/errors.js";

/**
 * Runs a store call and turns the store's user-facing errors into the catalogue's: the store
 * knows nothing of HTTP, and this edge is the only place that maps one onto the other.
 */
export function fromStore<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof StoreError) throw toAdminError(error);
    throw error;
  }
}

function toAdminError(error: StoreError): ApiError | StoreError {
  switch (error.code) {
    case "account_not_found":
    case "plan_not_found":
    case "plan_exists":
      return new ApiError(error.code, error.message);
    case "invalid_input":
    case "ambiguous_prefix":
      return new ApiError("invalid_request", error.message);
    case "database_unavailable":
      return new ApiError("service_unavailable", error.message);
    case "schema_too_new":
      return error;
  }
}
