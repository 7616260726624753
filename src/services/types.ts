/**
 * The store's records as the HTTP edge and the CLI see them: they reach the store only through
 * the services, and read its shapes from here, as types (the limits they validate against are
 * in src/record-limits.ts). The one set of values handed on is the store's errors, which the edge
 * maps to statuses and the CLI prints (ALLOWED_REEXPORTS in src/testing/import-graph.ts).
 */
export type {
  AdminActor,
  AdminAction,
  AdminTokenRecord,
  AuditEntry,
  Account,
  ApiKeyRecord,
  AuthenticatedKey,
  BilledTo,
  DailyUsage,
  KeyChanges,
  KeyLimits,
  KeySpend,
  LedgerCheck,
  LedgerEntry,
  Plan,
  PlanInput,
  Reservation,
  Standing,
  StoredResponse,
  Usage,
} from "../store/types.js";
export type { AccountDay, BusyAccount, DayActivity, KeyedLedgerEntry, LedgerKind, ServerError } from "../store/reports.js";
export { isStoreError, StoreError, type StoreErrorCode } from "../store/errors.js";
/** The CLI's administration commands refuse a database that is not this service's yet. */
export { DatabaseMissingError } from "../store/store.js";
