import { periodContaining } from "../billing/periods.js";
import type { Account, LedgerEntry, Plan, Store, Usage } from "../store/types.js";

/** An account with its plan and this period's usage: what the admin API and the CLI both show. */
export interface AccountSummary {
  account: Account;
  plan: Plan;
  usage: Usage;
}

export interface AccountsService {
  create(input: { name: string; plan?: string }): Promise<AccountSummary>;
  /** Undefined for an unknown id. */
  summary(accountId: string): Promise<AccountSummary | undefined>;
  list(): Promise<AccountSummary[]>;
  setPlan(accountId: string, plan: string): Promise<AccountSummary>;
  topUp(accountId: string, amountMicro: number, note?: string): Promise<{ entry: LedgerEntry; balanceMicro: number }>;
  entries(accountId: string, options?: { limit?: number }): Promise<LedgerEntry[]>;
}

export function createAccountsService(store: Store, now: () => number): AccountsService {
  const summarize = async (account: Account, plan?: Plan): Promise<AccountSummary> => {
    const accountPlan = plan ?? (await store.plans.get(account.planId));
    const usage = await store.ledger.usage(account.id, periodContaining(account.createdAt, now()));
    // Plans cannot be deleted and the account was just read, so this is a damaged database.
    if (!accountPlan || !usage) throw new Error(`account ${account.id} refers to plan ${account.planId}, which is missing`);
    return { account, plan: accountPlan, usage };
  };
  return {
    create: async (input) => summarize(await store.accounts.create(input)),
    async summary(accountId) {
      const account = await store.accounts.get(accountId);
      return account && summarize(account);
    },
    async list() {
      const plans = new Map((await store.plans.list()).map((plan) => [plan.id, plan]));
      const accounts = await store.accounts.list();
      return Promise.all(accounts.map((account) => summarize(account, plans.get(account.planId))));
    },
    setPlan: async (accountId, plan) => summarize(await store.accounts.setPlan(accountId, plan)),
    topUp: (accountId, amountMicro, note) => store.ledger.topUp(accountId, amountMicro, note),
    entries: (accountId, options) => store.ledger.entries(accountId, options),
  };
}
