import { createRoute, z } from "@hono/zod-openapi";
import { adminActor } from "../../http/admin-auth.js";
import { formatEuros } from "../../money/money.js";
import { ApiError } from "../../errors.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryOr404 } from "./account-summary.js";
import { AccountIdParams } from "./get-account.js";
import { EuroString, micros, readBody } from "./input.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { LedgerEntryView, ledgerEntryView } from "../../views/admin.js";

const TopUpBody = z
  .strictObject({
    amount: EuroString.openapi({ description: "Euros to add: a decimal string, more than zero, at most 6 decimals.", example: "12.50" }),
    note: z.string().max(500).optional().openapi({ description: "Kept on the ledger entry, e.g. an invoice number." }),
  })
  .openapi("AdminTopUpInput");

const TopUpResult = z
  .object({
    entry: LedgerEntryView,
    balance_micro: z.number().int().openapi({ description: "The balance after the top-up, in micro-euros." }),
    balance: z.string().openapi({ description: "The balance after the top-up, exact decimal euros.", example: "12.50" }),
  })
  .openapi("AdminTopUp");

const route = createRoute({
  method: "post",
  path: "/admin/v1/accounts/{id}/top-ups",
  summary: "Add money to an account's prepaid balance",
  security: ADMIN_SECURITY,
  request: { params: AccountIdParams, body: { required: true, content: { "application/json": { schema: TopUpBody } } } },
  responses: {
    201: { description: "The ledger entry and the new balance.", headers: requestIdHeader, content: { "application/json": { schema: TopUpResult } } },
    ...adminErrors("No such account (account_not_found).", {
      400: "The amount is not a positive decimal euro string, has more than 6 decimals, or would overflow the balance.",
    }),
  },
});

export function registerCreateTopUp(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const { id } = (await summaryOr404(services, c.req.param("id")!)).account;
    const body = await readBody(c, TopUpBody);
    const amount = micros(body.amount, "amount");
    if (amount === 0) throw new ApiError("invalid_request", "amount: a top-up must be more than 0.00");
    const { entry, balanceMicro } = await services.accounts.topUp(id, amount, body.note, adminActor(c));
    return c.json({ entry: ledgerEntryView(entry), balance_micro: balanceMicro, balance: formatEuros(balanceMicro) }, 201);
  });
}
