import { afterEach, describe, expect, it } from "vitest";
import { STORE_ENGINES } from "../testing/databases.js";
import { MAX_ACCOUNT_PAGE } from "./accounts.js";
import { fakeClock, tamper, testDatabases } from "./test-helpers.js";
import type { AccountPage, Store } from "./types.js";

/** accounts.page(): one page of accounts with plan and usage, searched, counted; on both engines. */

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const databases = testDatabases(engine);
  afterEach(() => databases.dropAll());

  const NAMES = ["Acme", "Globex", "acme labs", "Initech", "100% Juice", "under_score", "Back\\slash"];

  /** The accounts of NAMES, created one millisecond apart (so creation order is theirs). */
  async function storeWithAccounts() {
    const clock = fakeClock();
    const { store, database } = await databases.store({ now: clock.now });
    const accounts = [];
    for (const name of NAMES) {
      accounts.push(await store.accounts.create({ name }));
      clock.advance(1);
    }
    return { store, database, clock, accounts };
  }

  const names = (page: AccountPage) => page.accounts.map((listing) => listing.account.name);
  const search = (store: Store, text: string) => store.accounts.page({ search: text, limit: 50, offset: 0 });

  it("pages through every account oldest first, each page with the total", async () => {
    const { store } = await storeWithAccounts();
    const pages = [];
    for (let offset = 0; offset < NAMES.length; offset += 3) pages.push(await store.accounts.page({ limit: 3, offset }));
    expect(pages.map(names)).toEqual([NAMES.slice(0, 3), NAMES.slice(3, 6), NAMES.slice(6)]);
    expect(pages.map((page) => page.total)).toEqual([7, 7, 7]);
  });

  it("past the last page: no accounts, and still the total", async () => {
    const { store } = await storeWithAccounts();
    expect(await store.accounts.page({ limit: 3, offset: 50 })).toEqual({ accounts: [], total: NAMES.length });
    expect(await store.accounts.page({ search: "nobody", limit: 3, offset: 0 })).toEqual({ accounts: [], total: 0 });
  });

  it("clamps the limit to 1..MAX_ACCOUNT_PAGE and a negative offset to 0", async () => {
    const { store } = await storeWithAccounts();
    expect(names(await store.accounts.page({ limit: 0, offset: -5 }))).toEqual(["Acme"]);
    expect(names(await store.accounts.page({ limit: MAX_ACCOUNT_PAGE + 1, offset: 0 }))).toHaveLength(NAMES.length);
  });

  it("finds part of a name whatever its case, and an account by its whole id", async () => {
    const { store, accounts } = await storeWithAccounts();
    expect(names(await search(store, "ACME"))).toEqual(["Acme", "acme labs"]);
    expect(names(await search(store, "  lab "))).toEqual(["acme labs"]);
    expect(names(await search(store, accounts[3].id))).toEqual(["Initech"]);
    expect(names(await search(store, accounts[3].id.slice(0, 8))), "an id prefix is not an id").toEqual([]);
    expect((await store.accounts.page({ search: "acme", limit: 1, offset: 1 })).total).toBe(2);
  });

  it("takes %, _ and \\ in a search literally", async () => {
    const { store } = await storeWithAccounts();
    expect(names(await search(store, "%"))).toEqual(["100% Juice"]);
    expect(names(await search(store, "_"))).toEqual(["under_score"]);
    expect(names(await search(store, "\\"))).toEqual(["Back\\slash"]);
    expect(names(await search(store, "0%_"))).toEqual([]);
  });

  it("gives each account its plan and balance, as get() and plans.get() do", async () => {
    const { store, accounts } = await storeWithAccounts();
    const plan = await store.plans.create({ name: "gold", requestsPerMinute: 7, allowanceQuestions: 0, pricePerMillion: 3 });
    await store.accounts.setPlan(accounts[1].id, "gold");
    await store.ledger.topUp(accounts[1].id, 2_500_000);
    const [globex] = (await search(store, "Globex")).accounts;
    expect(globex).toEqual({ account: await store.accounts.get(accounts[1].id), plan, latestUsage: null });
    expect((await search(store, "Acme")).accounts[0].plan).toEqual(await store.plans.get("default"));
  });

  it("gives each account its latest usage row that has begun, whichever period that is", async () => {
    const { store, database, clock, accounts } = await storeWithAccounts();
    const [acme, globex, , initech] = accounts;
    const now = clock.now();
    const rows = [
      [acme.id, now - 40 * 86_400_000, 9, 0],
      [acme.id, now - 1000, 2, 1],
      [acme.id, now + 1000, 5, 5], // not begun: another instance's clock ahead, say
      [globex.id, now - 40 * 86_400_000, 4, 0],
      [initech.id, now + 1000, 1, 0],
    ];
    const values = rows.map((row) => `('${row[0]}', ${row.slice(1).join(", ")})`).join(", ");
    await tamper(database, `INSERT INTO plan_usage (account_id, period_start, used, reserved) VALUES ${values}`);
    const usage = Object.fromEntries((await store.accounts.page({ limit: 50, offset: 0 })).accounts.map((l) => [l.account.name, l.latestUsage]));
    expect(usage).toMatchObject({
      Acme: { periodStart: now - 1000, used: 2, reserved: 1 },
      Globex: { periodStart: now - 40 * 86_400_000, used: 4, reserved: 0 },
      Initech: null,
      "acme labs": null,
    });
  });
});
