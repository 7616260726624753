import type { AccountsRepository } from "./accounts-types.js";
import type { AdminTokensRepository, AuditRepository } from "./audit-types.js";
import type { BillingRepository } from "./billing-types.js";
import type { IdempotencyRepository, RateWindowsRepository } from "./counters-types.js";
import type { KeysRepository } from "./keys-types.js";
import type { LedgerRepository } from "./ledger-types.js";
import type { PlansRepository } from "./plans-types.js";
import type { ReportsRepository } from "./reports-types.js";
import type { TasksRepository } from "./tasks-types.js";

/** Each repository's types beside it, and here as one set. Timestamps are milliseconds since the Unix epoch. */
export type * from "./accounts-types.js";
export type * from "./audit-types.js";
export type * from "./billing-types.js";
export type * from "./counters-types.js";
export type * from "./keys-types.js";
export type * from "./ledger-types.js";
export type * from "./plans-types.js";
export type * from "./reports-types.js";
export type * from "./tasks-types.js";

export interface Store {
  /** Which engine holds the data, and where (a file path, or a URL without its password). */
  readonly dialect: "sqlite" | "postgres";
  readonly location: string;
  accounts: AccountsRepository;
  keys: KeysRepository;
  plans: PlansRepository;
  billing: BillingRepository;
  ledger: LedgerRepository;
  rateWindows: RateWindowsRepository;
  idempotency: IdempotencyRepository;
  audit: AuditRepository;
  adminTokens: AdminTokensRepository;
  /** The console's reports across accounts, and the server errors the edge records (reports.ts). */
  reports: ReportsRepository;
  /** Tenants' tasks, their examples, fits and versions (tasks.ts). */
  tasks: TasksRepository;
  /** Resolves when the database answers; rejects with StoreError database_unavailable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export { MAX_NAME_LENGTH } from "../record-limits.js";
