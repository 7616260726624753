import { createRoute, z } from "@hono/zod-openapi";
import { adminActor } from "../../http/admin-auth.js";
import { formatEuros } from "../../money/money.js";
import { ApiError } from "../../errors.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryOr404 } from "./account-summary.js";
import { AccountIdParams } from "./get-account.js";
import { micros, readBody } from "./input.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { LedgerEntryView, ledgerEntryView } from "../../views/admin.js";

const AdjustmentBody = z
  .strictObject({
    amount: z
      .string({ error: 'must be a signed decimal euro amount in a JSON string, such as "-1.50"' })
      .regex(/^-?\d{1,10}(\.\d{1,6})?$/, 'must be a decimal euro amount such as "-1.50": an optional minus, digits, at most 6 decimals')
      .openapi({ description: "Euros to add (positive) or take (negative), at most 6 decimals, not zero.", example: "-1.50" }),
    note: z.string().min(1).max(500).openapi({ description: "Why: required, kept on the ledger entry." }),
  })
  .openapi("AdminAdjustmentInput");

const AdjustmentResult = z
  .object({
    entry: LedgerEntryView,
    balance_micro: z.number().int().openapi({ description: "The balance after the adjustment, in micro-euros." }),
    balance: z.string().openapi({ description: "The balance after the adjustment, exact decimal euros.", example: "3.50" }),
  })
  .openapi("AdminAdjustment");

const route = createRoute({
  method: "post",
  path: "/admin/v1/accounts/{id}/adjustments",
  summary: "Correct an account's balance up or down, as its own ledger entry",
  security: ADMIN_SECURITY,
  request: { params: AccountIdParams, body: { required: true, content: { "application/json": { schema: AdjustmentBody } } } },
  responses: {
    201: {
      description: "The ledger entry (kind adjustment) and the new balance.",
      headers: requestIdHeader,
      content: { "application/json": { schema: AdjustmentResult } },
    },
    ...adminErrors("No such account (account_not_found).", {
      400: "The amount is zero or not a signed decimal euro string, the note is missing, or the balance would go below zero (or below what requests in flight hold) or overflow.",
    }),
  },
});

export function registerCreateAdjustment(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const { id } = (await summaryOr404(services, c.req.param("id")!)).account;
    const body = await readBody(c, AdjustmentBody);
    const negative = body.amount.startsWith("-");
    const magnitude = micros(negative ? body.amount.slice(1) : body.amount, "amount");
    if (magnitude === 0) throw new ApiError("invalid_request", "amount: an adjustment must not be 0.00");
    const { entry, balanceMicro } = await services.accounts.adjust(id, negative ? -magnitude : magnitude, body.note, adminActor(c));
    return c.json({ entry: ledgerEntryView(entry), balance_micro: balanceMicro, balance: formatEuros(balanceMicro) }, 201);
  });
}
