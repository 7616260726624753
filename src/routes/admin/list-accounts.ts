import { createRoute, z } from "@hono/zod-openapi";
import { MAX_ACCOUNT_PAGE, MAX_NAME_LENGTH } from "../../record-limits.js";
import type { Services } from "../../services/build.js";
import { requestIdHeader } from "../shared.schema.js";
import { summaryView } from "./account-summary.js";
import { readQuery, wholeNumberParam } from "./input.js";
import { ADMIN_SECURITY, addRoute, adminErrors, type AdminApi } from "./route.js";
import { AccountView } from "../../views/admin.js";

export const DEFAULT_ACCOUNT_PAGE = 50;

const AccountsQuery = z.object({
  search: z
    .string()
    .max(MAX_NAME_LENGTH)
    .optional()
    .openapi({ description: "Part of the account's name (case-insensitive for ASCII letters), or its whole id. Empty: every account." }),
  limit: wholeNumberParam(1, MAX_ACCOUNT_PAGE, `Accounts per page: 1 to ${MAX_ACCOUNT_PAGE}, ${DEFAULT_ACCOUNT_PAGE} by default.`),
  offset: wholeNumberParam(0, Number.MAX_SAFE_INTEGER, "How many matching accounts to skip (0 by default)."),
});

const AccountPage = z
  .object({
    accounts: z.array(AccountView).openapi({ description: "This page of the matching accounts, oldest first." }),
    total: z.number().int().openapi({ description: "How many accounts match, on all pages." }),
    limit: z.number().int(),
    offset: z.number().int(),
    next_offset: z.number().int().nullable().openapi({ description: "The offset of the next page; null on the last page." }),
  })
  .openapi("AdminAccountPage");

const route = createRoute({
  method: "get",
  path: "/admin/v1/accounts",
  summary: "A page of accounts, each with its plan, balance and usage of the current period; searchable",
  security: ADMIN_SECURITY,
  request: { query: AccountsQuery },
  responses: {
    200: { description: "The page, read in one query.", headers: requestIdHeader, content: { "application/json": { schema: AccountPage } } },
    ...adminErrors("", { 400: `limit is not a whole number from 1 to ${MAX_ACCOUNT_PAGE}, offset not a whole number, or search is too long.` }),
  },
});

export function registerListAccounts(api: AdminApi, services: Services): void {
  addRoute(api, route, async (c) => {
    const query = readQuery(c, AccountsQuery);
    const limit = query.limit ?? DEFAULT_ACCOUNT_PAGE;
    const offset = query.offset ?? 0;
    const { accounts, total } = await services.accounts.page({ search: query.search, limit, offset });
    const next = offset + accounts.length;
    return c.json({ accounts: accounts.map(summaryView), total, limit, offset, next_offset: accounts.length > 0 && next < total ? next : null }, 200);
  });
}
