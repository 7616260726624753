import type { Database } from "./db.js";
import { StoreError } from "./errors.js";
import { normalizeName } from "./names.js";
import { newId } from "./random.js";
import type { Account, AccountsRepository, PlansRepository } from "./types.js";

interface AccountRow {
  id: string;
  name: string;
  created_at: number;
  plan_id: string;
  balance_micro: number;
  reserved_micro: number;
}

const COLUMNS = "id, name, created_at, plan_id, balance_micro, reserved_micro";

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
  planId: row.plan_id,
  balanceMicro: row.balance_micro,
  reservedMicro: row.reserved_micro,
});

/** The plan new accounts get when none is named (created by migration 2). */
export const DEFAULT_PLAN = "default";

export function createAccountsRepository(db: Database, now: () => number, plans: PlansRepository): AccountsRepository {
  const insert = db.prepare("INSERT INTO accounts (id, name, created_at, plan_id) VALUES (?, ?, ?, ?)");
  const selectAll = db.prepare<[], AccountRow>(`SELECT ${COLUMNS} FROM accounts ORDER BY created_at, id`);
  const selectById = db.prepare<[string], AccountRow>(`SELECT ${COLUMNS} FROM accounts WHERE id = ?`);
  const updatePlan = db.prepare<[string, string]>("UPDATE accounts SET plan_id = ? WHERE id = ?");

  const planId = (idOrName: string) => {
    const plan = plans.get(idOrName);
    if (!plan) throw new StoreError("plan_not_found", `No plan with id or name ${idOrName}`);
    return plan.id;
  };
  const get = (id: string) => {
    const row = selectById.get(id);
    return row && toAccount(row);
  };

  return {
    create(input) {
      const name = normalizeName(input.name, "Account name");
      const id = newId("acct");
      insert.run(id, name, now(), planId(input.plan ?? DEFAULT_PLAN));
      return get(id)!;
    },
    list: () => selectAll.all().map(toAccount),
    get,
    setPlan(accountId, plan) {
      if (updatePlan.run(planId(plan), accountId).changes === 0) {
        throw new StoreError("account_not_found", `No account with id ${accountId}`);
      }
      return get(accountId)!;
    },
  };
}
