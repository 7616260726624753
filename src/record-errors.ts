/**
 * Errors the store raises for conditions a caller (CLI, HTTP layer) should report to a user
 * rather than treat as a bug. `code` is stable and safe to branch on; `message` is for humans.
 * Kept below every layer, beside record-limits.ts, because the store raises them and the edge
 * (src/errors.ts maps each code to a status) and the CLI (prints the message) recognise them by
 * class: each imports them from here, none through another layer.
 */
export type StoreErrorCode =
  | "account_not_found"
  /** The API key's account is disabled: its keys get 401 until it is enabled again. */
  | "account_disabled"
  | "plan_not_found"
  | "plan_exists"
  | "ambiguous_prefix"
  | "invalid_input"
  | "task_exists"
  | "task_not_found"
  | "task_quota_exceeded"
  | "fit_in_progress"
  | "schema_too_new"
  /** The database cannot be reached, refused the connection, or did not answer in time. */
  | "database_unavailable";

export class StoreError extends Error {
  readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreError";
    this.code = code;
  }
}

export function isStoreError(error: unknown, code?: StoreErrorCode): error is StoreError {
  return error instanceof StoreError && (code === undefined || error.code === code);
}

/** The database named does not exist yet (or is not this service's) and `mustExist` forbade creating it. */
export class DatabaseMissingError extends StoreError {
  constructor(message: string) {
    super("database_unavailable", message);
    this.name = "DatabaseMissingError";
  }
}
