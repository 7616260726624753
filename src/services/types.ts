/**
 * The store's records as the HTTP edge and the CLI see them: they reach the store only through
 * the services, and read its shapes from here, as types only (the limits they validate against
 * are in src/record-limits.ts, the store's errors in src/record-errors.ts).
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
  FitRecord,
  TaskRecord,
  TasksRepository,
  VersionRecord,
} from "../store/types.js";
export type { AccountDay, BusyAccount, DayActivity, KeyedLedgerEntry, LedgerKind, ServerError } from "../store/reports.js";
