import { formatEuros, percentUsed } from "../money/money.js";
import type { BilledTo, Standing } from "../services/types.js";

/** What an account has left, on every judged response and on a 402. */
export function standingHeaders(standing: Standing): Record<string, string> {
  return {
    "x-plan-usage": `${percentUsed(standing.planUsed, standing.allowance)}%`,
    "x-balance-remaining": formatEuros(standing.balanceMicro),
  };
}

export function billingHeaders(settled: { billedTo: BilledTo; standing: Standing }): Record<string, string> {
  return { "x-billed-to": settled.billedTo, ...standingHeaders(settled.standing) };
}
