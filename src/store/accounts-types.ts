import type { AdminActor } from "./audit-types.js";
import type { Plan } from "./plans-types.js";

/** What the accounts repository (accounts.ts) takes and hands out; re-exported by types.ts. Timestamps are milliseconds since the Unix epoch. */

export interface Account {
  id: string;
  name: string;
  /** Also the anchor of the account's monthly allowance periods. */
  createdAt: number;
  planId: string;
  /** Prepaid balance in micro-euros, including any part held by requests in flight. */
  balanceMicro: number;
  /** The part of the balance held by requests in flight. */
  reservedMicro: number;
  /** When the account was disabled (its keys then get 401 account_disabled); null while enabled. */
  disabledAt: number | null;
}

/** An account as a list shows it: its plan, and its latest usage row that has begun. */
export interface AccountListing {
  account: Account;
  plan: Plan;
  /**
   * The usage row with the latest period start not after now, or null. The store knows nothing
   * of periods: the caller compares `periodStart` with the account's current period.
   */
  latestUsage: { periodStart: number; used: number; reserved: number } | null;
}

export interface AccountPageQuery {
  /** Part of the name (case-insensitive for ASCII letters) or the whole account id. */
  search?: string;
  limit: number;
  offset: number;
}

export interface AccountPage {
  /** Oldest first. */
  accounts: AccountListing[];
  /** How many accounts match the search, on every page. */
  total: number;
}

export interface AccountsRepository {
  /** On the plan named (by id or name), or on the "default" plan. `by` records it in the audit log. */
  create(input: { name: string; plan?: string }, by?: AdminActor): Promise<Account>;
  list(): Promise<Account[]>;
  /** One page of accounts with their plans and usage, in one query. */
  page(query: AccountPageQuery): Promise<AccountPage>;
  get(id: string): Promise<Account | undefined>;
  setPlan(accountId: string, plan: string, by?: AdminActor): Promise<Account>;
  rename(accountId: string, name: string, by?: AdminActor): Promise<Account>;
  /** Disabling keeps everything; its keys get 401 account_disabled from their next request, on every instance. */
  setDisabled(accountId: string, disabled: boolean, by?: AdminActor): Promise<Account>;
}
