import { ApiError } from "../../errors.js";
import type { Services } from "../../services/build.js";
import type { AccountSummary } from "../../services/accounts.js";
import { accountView } from "../../views/admin.js";

/** The account with its plan, balance and current-period usage, as every admin response shows it. */
export const summaryView = ({ account, plan, usage }: AccountSummary) => accountView(account, plan, usage);

/** The account's summary, or 404 account_not_found. */
export async function summaryOr404(services: Services, id: string): Promise<AccountSummary> {
  const summary = await services.accounts.summary(id);
  if (!summary) throw new ApiError("account_not_found", `No account with id ${id}`);
  return summary;
}
