import { afterEach, describe, expect, it } from "vitest";
import { STORE_ENGINES } from "../testing/databases.js";
import type { Database } from "./database.js";
import { testDatabases } from "./test-helpers.js";

/** database.statement: the request path's plain-SQL statements, on both engines. */
describe.each(STORE_ENGINES)("statements on %s", (engine) => {
  const databases = testDatabases(engine);
  afterEach(() => databases.dropAll());

  async function withTable(): Promise<Database> {
    const database = await databases.fresh().raw();
    await database.transaction((trx) => database.runScript(trx, `CREATE TABLE items (k TEXT PRIMARY KEY, n BIGINT NOT NULL)`));
    return database;
  }

  it("bind their parameters in order and read integers back as numbers", async () => {
    const database = await withTable();
    try {
      const insert = database.statement<never>(`INSERT INTO items (k, n) VALUES (?, ?)`);
      const read = database.statement<{ n: number; k: string }>(`SELECT n, k FROM items WHERE k = ? AND n > ?`);
      expect(await insert.all(database.db, ["x", 5])).toEqual([]);
      const rows = await read.all(database.db, ["x", 4]);
      expect(
        rows,
        JSON.stringify(rows, (_, v) => (typeof v === "bigint" ? `${v}n` : v)),
      ).toEqual([{ n: 5, k: "x" }]);
      expect(await read.all(database.db, ["x", 5])).toEqual([]);
    } finally {
      await database.close();
    }
  });

  it("refuse an integer beyond a number's exact range instead of rounding it", async () => {
    const database = await withTable();
    try {
      await database.transaction((trx) => database.runScript(trx, `INSERT INTO items (k, n) VALUES ('big', 9007199254740993)`));
      const read = database.statement<{ n: number }>(`SELECT n FROM items WHERE k = ?`);
      await expect(read.all(database.db, ["big"])).rejects.toThrow(/9007199254740993/);
    } finally {
      await database.close();
    }
  });

  it("run on their own never join a transaction another caller holds open across an await", async () => {
    const database = await withTable();
    try {
      const insert = database.statement<never>(`INSERT INTO items (k, n) VALUES (?, ?)`);
      let reopen!: () => void;
      const held = new Promise<void>((resolve) => (reopen = resolve));
      const rolledBack = database.transaction(async (trx) => {
        await insert.all(trx, ["inside", 1]);
        await held;
        throw new Error("rolled back on purpose");
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const own = insert.all(database.db, ["own", 2]);
      reopen();
      await expect(rolledBack).rejects.toThrow("rolled back on purpose");
      await own;
      const rows = await database.statement<{ k: string; n: number }>(`SELECT k, n FROM items ORDER BY k`).all(database.db, []);
      expect(rows, JSON.stringify(rows)).toEqual([{ k: "own", n: 2 }]);
    } finally {
      await database.close();
    }
  });
});
