import { periodContaining, type Period, DAY_MS } from "../money/periods.js";
import { MAX_ACCOUNT_PAGE } from "../store/accounts.js";
import type {
  Account,
  AccountListing,
  AccountPageQuery,
  AdminActor,
  DailyUsage,
  ModelUsage,
  LedgerActivity,
  LedgerEntry,
  Plan,
  Store,
  Usage,
} from "../store/types.js";

/** An account with its plan and this period's usage: what the admin API and the CLI both show. */
export interface AccountSummary {
  account: Account;
  plan: Plan;
  usage: Usage;
}

/** What the console's overview shows of the ledger: today and this month, both in UTC. */
export interface Overview {
  today: Period & LedgerActivity;
  month: Period & LedgerActivity;
  accounts: number;
}

export interface AccountsService {
  /** `by`, on every admin change: who, for the audit log (written in the change's transaction). */
  create(input: { name: string; plan?: string }, by?: AdminActor): Promise<AccountSummary>;
  /** Undefined for an unknown id. */
  summary(accountId: string): Promise<AccountSummary | undefined>;
  list(): Promise<AccountSummary[]>;
  /** One page of summaries, oldest first, and how many accounts match in all. */
  page(query: AccountPageQuery): Promise<{ accounts: AccountSummary[]; total: number }>;
  setPlan(accountId: string, plan: string, by?: AdminActor): Promise<AccountSummary>;
  rename(accountId: string, name: string, by?: AdminActor): Promise<AccountSummary>;
  /** A disabled account's keys get 401 account_disabled from their next request; nothing is deleted. */
  setDisabled(accountId: string, disabled: boolean, by?: AdminActor): Promise<AccountSummary>;
  topUp(accountId: string, amountMicro: number, note?: string, by?: AdminActor): Promise<{ entry: LedgerEntry; balanceMicro: number }>;
  adjust(accountId: string, amountMicro: number, note: string, by?: AdminActor): Promise<{ entry: LedgerEntry; balanceMicro: number }>;
  entries(accountId: string, options?: { limit?: number }): Promise<LedgerEntry[]>;
  entryPage(accountId: string, options: { limit: number; before?: number }): Promise<{ entries: LedgerEntry[]; nextBefore: number | null }>;
  /** The account's current period and its judgments by UTC day so far (days without any absent). */
  usageByDay(account: Account): Promise<{ period: Period; now: number; days: DailyUsage[]; models: ModelUsage[] }>;
  overview(): Promise<Overview>;
}

export function createAccountsService(store: Store, now: () => number): AccountsService {
  const summarize = async (account: Account, plan?: Plan): Promise<AccountSummary> => {
    const accountPlan = plan ?? (await store.plans.get(account.planId));
    const usage = await store.ledger.usage(account.id, periodContaining(account.createdAt, now()));
    // Plans cannot be deleted and the account was just read, so this is a damaged database.
    if (!accountPlan || !usage) throw new Error(`account ${account.id} refers to plan ${account.planId}, which is missing`);
    return { account, plan: accountPlan, usage };
  };
  const page = async (query: AccountPageQuery) => {
    const { accounts, total } = await store.accounts.page(query);
    return { accounts: accounts.map((listing) => fromListing(listing, now())), total };
  };
  return {
    create: async (input, by) => summarize(await store.accounts.create(input, by)),
    async summary(accountId) {
      const account = await store.accounts.get(accountId);
      return account && summarize(account);
    },
    async list() {
      const all: AccountSummary[] = [];
      for (let offset = 0; ; offset += MAX_ACCOUNT_PAGE) {
        const { accounts, total } = await page({ limit: MAX_ACCOUNT_PAGE, offset });
        all.push(...accounts);
        if (accounts.length === 0 || offset + accounts.length >= total) return all;
      }
    },
    page,
    setPlan: async (accountId, plan, by) => summarize(await store.accounts.setPlan(accountId, plan, by)),
    rename: async (accountId, name, by) => summarize(await store.accounts.rename(accountId, name, by)),
    setDisabled: async (accountId, disabled, by) => summarize(await store.accounts.setDisabled(accountId, disabled, by)),
    topUp: (accountId, amountMicro, note, by) => store.ledger.topUp(accountId, amountMicro, note, by),
    adjust: (accountId, amountMicro, note, by) => store.ledger.adjust(accountId, amountMicro, note, by),
    entries: (accountId, options) => store.ledger.entries(accountId, options),
    entryPage: (accountId, options) => store.ledger.entryPage(accountId, options),
    async usageByDay(account) {
      const at = now();
      const period = periodContaining(account.createdAt, at);
      const [days, models] = await Promise.all([store.ledger.usageByDay(account.id, period), store.ledger.usageByModel(account.id, period)]);
      return { period, now: at, days, models };
    },
    async overview() {
      const at = now();
      const day = Math.floor(at / DAY_MS) * DAY_MS;
      const today = { start: day, end: day + DAY_MS };
      const date = new Date(at);
      const month = { start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1), end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) };
      const [todays, months, { total }] = await Promise.all([
        store.ledger.activity(today),
        store.ledger.activity(month),
        store.accounts.page({ limit: 1, offset: 0 }),
      ]);
      return { today: { ...today, ...todays }, month: { ...month, ...months }, accounts: total };
    },
  };
}

/** The listing's usage row counts only if it is of the account's current period; else none is used yet. */
function fromListing({ account, plan, latestUsage }: AccountListing, at: number): AccountSummary {
  const period = periodContaining(account.createdAt, at);
  const current = latestUsage?.periodStart === period.start ? latestUsage : undefined;
  const usage: Usage = {
    accountId: account.id,
    period,
    used: current?.used ?? 0,
    reserved: current?.reserved ?? 0,
    allowance: plan.allowanceQuestions,
    balanceMicro: account.balanceMicro,
    reservedMicro: account.reservedMicro,
  };
  return { account, plan, usage };
}
