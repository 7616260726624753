import type { Migration } from "./migration.js";
import { migration as accountsAndApiKeys } from "./0001-accounts-and-api-keys.js";
import { migration as plansLedgerReservations } from "./0002-plans-ledger-reservations.js";
import { migration as rateWindowsByKey } from "./0003-rate-windows-by-key.js";
import { migration as ledgerByTime } from "./0004-ledger-by-time.js";
import { migration as auditLog } from "./0005-accounts-disabled-admin-tokens-audit-log.js";
import { migration as keyLimits } from "./0006-key-limits.js";
import { migration as serverErrors } from "./0007-server-errors-and-ledger-keys.js";
import { migration as ledgerModels } from "./0008-ledger-model-and-plan-models.js";
import { migration as tasks } from "./0009-tasks.js";

export type { Migration } from "./migration.js";

/**
 * Schema changes, in order, one file each (NNNN-name.ts). Append only: never edit or reorder a
 * migration that has shipped, because existing databases have already run it. Add version N+1
 * instead (store/migrate.ts checks the numbering).
 */
export const MIGRATIONS: readonly Migration[] = [
  accountsAndApiKeys,
  plansLedgerReservations,
  rateWindowsByKey,
  ledgerByTime,
  auditLog,
  keyLimits,
  serverErrors,
  ledgerModels,
  tasks,
];
