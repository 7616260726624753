/**
 * The store's records and limits as the HTTP edge and the CLI see them: they reach the store
 * only through the services, and read its shapes and errors from here (src/layering.test.ts).
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
export { MAX_NAME_LENGTH } from "../store/types.js";
export { MAX_ACCOUNT_PAGE } from "../store/accounts.js";
export { MAX_LEDGER_PAGE } from "../store/ledger.js";
export { MAX_AUDIT_PAGE } from "../store/audit.js";
export { LEDGER_KINDS, type AccountDay, type BusyAccount, type DayActivity, type KeyedLedgerEntry, type LedgerKind, type ServerError } from "../store/reports.js";
export { PLAN_LIMITS } from "../store/plans.js";
export { isStoreError, StoreError, type StoreErrorCode } from "../store/errors.js";
export { randomBytesNow } from "../store/random.js";
