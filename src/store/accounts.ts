import type { Database } from "./database.js";
import { StoreError } from "./errors.js";
import { normalizeName } from "./names.js";
import { newId } from "./random.js";
import type { Account, AccountsRepository, PlansRepository } from "./types.js";

const COLUMNS = ["id", "name", "created_at", "plan_id", "balance_micro", "reserved_micro"] as const;

interface AccountRow {
  id: string;
  name: string;
  created_at: number;
  plan_id: string;
  balance_micro: number;
  reserved_micro: number;
}

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

export function createAccountsRepository(database: Database, now: () => number, plans: PlansRepository): AccountsRepository {
  const { db } = database;
  const planId = async (idOrName: string) => {
    const plan = await plans.get(idOrName);
    if (!plan) throw new StoreError("plan_not_found", `No plan with id or name ${idOrName}`);
    return plan.id;
  };
  const get = async (id: string) => {
    const row = await db.selectFrom("accounts").select(COLUMNS).where("id", "=", id).executeTakeFirst();
    return row && toAccount(row);
  };

  return {
    async create(input) {
      const name = normalizeName(input.name, "Account name");
      const id = newId("acct");
      const plan = await planId(input.plan ?? DEFAULT_PLAN);
      await db.insertInto("accounts").values({ id, name, created_at: now(), plan_id: plan }).execute();
      return (await get(id))!;
    },
    list: async () =>
      (await db.selectFrom("accounts").select(COLUMNS).orderBy("created_at").orderBy("id").execute()).map(toAccount),
    get,
    async setPlan(accountId, plan) {
      const result = await db.updateTable("accounts").set({ plan_id: await planId(plan) }).where("id", "=", accountId).executeTakeFirst();
      if (result.numUpdatedRows === 0n) throw new StoreError("account_not_found", `No account with id ${accountId}`);
      return (await get(accountId))!;
    },
  };
}
