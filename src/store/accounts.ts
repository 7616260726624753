import { MAX_ACCOUNT_PAGE } from "../record-limits.js";
import { sql } from "kysely";
import type { Database, Queries } from "./database.js";
import { StoreError } from "../record-errors.js";
import { normalizeName } from "./names.js";
import { newId } from "./random.js";
import { audited } from "./audit.js";
import type { Account, AccountListing, AccountPageQuery, AccountsRepository, AdminActor, PlansRepository } from "./types.js";
import type { RowOf } from "./schema.js";

const COLUMNS = ["id", "name", "created_at", "plan_id", "balance_micro", "reserved_micro", "disabled_at"] as const;

type AccountRow = RowOf<"accounts", (typeof COLUMNS)[number]>;

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
  planId: row.plan_id,
  balanceMicro: row.balance_micro,
  reservedMicro: row.reserved_micro,
  disabledAt: row.disabled_at,
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

  /** One change to an account, with its audit entry in the same transaction; account_not_found when there is none. */
  const change = async (
    accountId: string,
    by: AdminActor | undefined,
    update: (trx: Queries) => Promise<{ numUpdatedRows: bigint }>,
    describe: (before: Account, after: Account) => { action: string; details: Record<string, unknown> } | undefined,
  ) =>
    audited(
      database,
      now,
      by,
      async (trx) => {
        const read = async () => {
          const row = await trx.selectFrom("accounts").select(COLUMNS).where("id", "=", accountId).executeTakeFirst();
          if (!row) throw new StoreError("account_not_found", `No account with id ${accountId}`);
          return toAccount(row);
        };
        const before = await read();
        const changed = (await update(trx)).numUpdatedRows > 0n;
        return { before, after: await read(), changed };
      },
      ({ before, after, changed }) => {
        const what = changed && describe(before, after);
        return what ? { ...what, object: { kind: "account", id: accountId }, accountId } : undefined;
      },
    ).then(({ after }) => after);

  return {
    async create(input, by) {
      const name = normalizeName(input.name, "Account name");
      const id = newId("acct");
      const plan = await planId(input.plan ?? DEFAULT_PLAN);
      await audited(
        database,
        now,
        by,
        (trx) => trx.insertInto("accounts").values({ id, name, created_at: now(), plan_id: plan }).execute(),
        () => ({ action: "account.create", object: { kind: "account", id }, accountId: id, details: { name, plan_id: plan } }),
      );
      return (await get(id))!;
    },
    list: async () => (await db.selectFrom("accounts").select(COLUMNS).orderBy("created_at").orderBy("id").execute()).map(toAccount),
    get,
    page: (query) => accountPage(db, now(), query),
    async setPlan(accountId, plan, by) {
      const id = await planId(plan);
      return change(
        accountId,
        by,
        (trx) => trx.updateTable("accounts").set({ plan_id: id }).where("id", "=", accountId).where("plan_id", "<>", id).executeTakeFirst(),
        (before, after) => ({ action: "account.set_plan", details: { from: before.planId, to: after.planId } }),
      );
    },
    async rename(accountId, name, by) {
      const next = normalizeName(name, "Account name");
      return change(
        accountId,
        by,
        (trx) => trx.updateTable("accounts").set({ name: next }).where("id", "=", accountId).where("name", "<>", next).executeTakeFirst(),
        (before, after) => ({ action: "account.rename", details: { from: before.name, to: after.name } }),
      );
    },
    async setDisabled(accountId, disabled, by) {
      // Disabling a disabled account keeps its first time; neither twice records anything new.
      return change(
        accountId,
        by,
        (trx) =>
          trx
            .updateTable("accounts")
            .set({ disabled_at: disabled ? now() : null })
            .where("id", "=", accountId)
            .where("disabled_at", disabled ? "is" : "is not", null)
            .executeTakeFirst(),
        () => ({ action: disabled ? "account.disable" : "account.enable", details: {} }),
      );
    },
  };
}

export { MAX_ACCOUNT_PAGE };

/** `search` as a LIKE pattern matching it anywhere, its own %, _ and \ taken literally. */
const containing = (search: string) => `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Accounts with their plans, their latest usage row and the number matching, in one statement:
 * the console lists thousands of accounts without a query per account. The page is cut from
 * the accounts alone (counted as it is cut); plans and usage are joined to its rows only.
 */
async function accountPage(db: Queries, now: number, query: AccountPageQuery): Promise<{ accounts: AccountListing[]; total: number }> {
  const limit = Math.min(Math.max(1, Math.trunc(query.limit)), MAX_ACCOUNT_PAGE);
  const offset = Math.max(0, Math.trunc(query.offset));
  const search = query.search?.trim() ?? "";
  const page = matching(db, search)
    .select(COLUMNS.map((column) => `a.${column}` as const))
    .select((eb) => eb.fn.countAll<number>().over().as("total"))
    .orderBy("a.created_at")
    .orderBy("a.id")
    .limit(limit)
    .offset(offset)
    .as("a");
  const rows = await db
    .selectFrom(page)
    .innerJoin("plans as p", "p.id", "a.plan_id")
    .leftJoin("plan_usage as u", (join) =>
      join.onRef("u.account_id", "=", "a.id").on((eb) =>
        eb(
          "u.period_start",
          "=",
          eb
            .selectFrom("plan_usage as l")
            .select((e) => e.fn.max("l.period_start").as("latest"))
            .whereRef("l.account_id", "=", "a.id")
            .where("l.period_start", "<=", now),
        ),
      ),
    )
    .selectAll("a")
    .select(["p.name as plan_name", "p.requests_per_minute", "p.allowance_questions", "p.price_per_million", "p.created_at as plan_created_at"])
    .select(["u.period_start", "u.used", "u.reserved"])
    .orderBy("a.created_at")
    .orderBy("a.id")
    .execute();
  // Past the last page no row carries the total: count apart (a rare, cheap query).
  const total =
    rows[0]?.total ??
    (
      await matching(db, search)
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow()
    ).n;
  const accounts = rows.map((row) => ({
    account: toAccount(row),
    plan: {
      id: row.plan_id,
      name: row.plan_name,
      requestsPerMinute: row.requests_per_minute,
      allowanceQuestions: row.allowance_questions,
      pricePerMillion: row.price_per_million,
      createdAt: row.plan_created_at,
    },
    latestUsage: row.period_start === null ? null : { periodStart: row.period_start, used: row.used ?? 0, reserved: row.reserved ?? 0 },
  }));
  return { accounts, total };
}

/** The accounts a search matches: part of the name, or the whole id. */
function matching(db: Queries, search: string) {
  const accounts = db.selectFrom("accounts as a");
  if (search === "") return accounts;
  // lower() on both sides: the database folds case the same way for the name and the pattern.
  return accounts.where((eb) => eb.or([sql<boolean>`lower(a.name) LIKE lower(${containing(search)}) ESCAPE '\\'`, eb("a.id", "=", search)]));
}
