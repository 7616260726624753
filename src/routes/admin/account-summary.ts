import { ApiError } from "../../errors.js";
import type { Account, Plan, Store } from "../../store/types.js";
import { accountView } from "./views.js";

/** The account with its plan, balance and current-period usage, as every admin response shows it. */
export function summarizeAccount(store: Store, account: Account, plan?: Plan) {
  const usage = store.ledger.usage(account.id);
  const accountPlan = plan ?? store.plans.get(account.planId);
  if (!usage || !accountPlan) throw new ApiError("account_not_found", `No account with id ${account.id}`);
  return accountView(account, accountPlan, usage);
}

/** The account, or 404 account_not_found. */
export function accountOr404(store: Store, id: string): Account {
  const account = store.accounts.get(id);
  if (!account) throw new ApiError("account_not_found", `No account with id ${id}`);
  return account;
}
