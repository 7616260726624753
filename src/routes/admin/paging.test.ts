import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall } from "../../testing/admin-client.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { show } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/** GET /admin/v1/accounts pages and searches; GET …/ledger pages back; on SQLite and on PostgreSQL. */

describe.each(STORE_ENGINES)("on %s", (engine) => {
  let server: TestServer;
  const ids: string[] = [];
  const NAMES = ["Paging Alpha", "paging beta", "Paging Gamma", "Paging delta", "Paging 100%"];
  beforeAll(async () => {
    server = await startTestServer({ store: engine });
    for (const name of NAMES) {
      ids.push((await adminCall(server, "POST", "/admin/v1/accounts", { body: { name } })).json.id);
      // "Oldest first" breaks a tie of created_at (milliseconds) by id: each its own millisecond,
      // so that the order asked for below is the creation order.
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
  });
  afterAll(async () => {
    await server?.close();
  });

  const list = (query: string) => adminCall(server, "GET", `/admin/v1/accounts?${query}`);

  describe("GET /admin/v1/accounts", () => {
    it("follows next_offset through every page, oldest first, each with the total", async () => {
      const seen: string[] = [];
      let offset: number | null = 0;
      while (offset !== null) {
        const page = await list(`search=paging&limit=2&offset=${offset}`);
        expect(page.status, show(page)).toBe(200);
        expect(page.json, show(page)).toMatchObject({ total: 5, limit: 2, offset });
        expect(page.json.accounts.length, show(page)).toBeLessThanOrEqual(2);
        seen.push(...page.json.accounts.map((account: any) => account.name));
        offset = page.json.next_offset;
      }
      expect(seen).toEqual(NAMES);
    });

    it("answers 50 accounts at most by default, every account with plan, balance and usage", async () => {
      const page = await list("");
      expect(page.json, show(page)).toMatchObject({ total: 6, limit: 50, offset: 0, next_offset: null });
      expect(
        page.json.accounts.map((account: any) => account.id),
        show(page),
      ).toEqual([server.accountId, ...ids]);
      const detail = await adminCall(server, "GET", `/admin/v1/accounts/${ids[2]}`);
      expect(page.json.accounts[3], `${show(page)}\n${show(detail)}`).toEqual(detail.json.account);
    });

    it("searches part of a name whatever its case, % literally, or a whole id", async () => {
      const names = async (query: string) => (await list(query)).json.accounts.map((account: any) => account.name);
      expect(await names("search=PAGING%20%20G")).toEqual([]);
      expect(await names("search=ing%20g")).toEqual(["Paging Gamma"]);
      expect(await names("search=100%25")).toEqual(["Paging 100%"]);
      expect(await names(`search=${ids[1]}`)).toEqual(["paging beta"]);
      const none = await list("search=nobody");
      expect(none.json, show(none)).toEqual({ accounts: [], total: 0, limit: 50, offset: 0, next_offset: null });
    });

    it("answers an offset past the end with no accounts and the total", async () => {
      const page = await list("offset=100");
      expect(page.json, show(page)).toEqual({ accounts: [], total: 6, limit: 50, offset: 100, next_offset: null });
    });

    for (const query of ["limit=0", "limit=501", "limit=x", "offset=-1", "offset=1.5", `search=${"a".repeat(201)}`]) {
      it(`refuses ?${query.slice(0, 20)} with 400`, async () => {
        expectErrorResponse(await list(query), 400, "invalid_request");
      });
    }
  });

  describe("GET /admin/v1/accounts/{id}/ledger", () => {
    it("pages back with next_before until it is null", async () => {
      for (const amount of ["1", "2", "3", "4", "5"]) {
        await adminCall(server, "POST", `/admin/v1/accounts/${ids[0]}/top-ups`, { body: { amount, note: `n${amount}` } });
      }
      const notes: string[][] = [];
      let before: number | null | undefined;
      do {
        const page = await adminCall(server, "GET", `/admin/v1/accounts/${ids[0]}/ledger?limit=2${before ? `&before=${before}` : ""}`);
        expect(page.status, show(page)).toBe(200);
        notes.push(page.json.entries.map((entry: any) => entry.note));
        before = page.json.next_before;
      } while (before !== null);
      expect(notes).toEqual([["n5", "n4"], ["n3", "n2"], ["n1"]]);
    });

    it("refuses a before that is not a positive whole number with 400", async () => {
      for (const before of ["0", "-3", "x", ""]) {
        expectErrorResponse(await adminCall(server, "GET", `/admin/v1/accounts/${ids[0]}/ledger?before=${before}`), 400, "invalid_request");
      }
    });
  });
});
