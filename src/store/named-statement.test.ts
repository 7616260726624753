import { afterEach, describe, expect, it } from "vitest";
import { STORE_ENGINES } from "../testing/databases.js";
import { namedStatement } from "./named-statement.js";
import { testDatabases } from "./test-helpers.js";

/** namedStatement: the money path's statements take their values by name, on both engines. */
describe.each(STORE_ENGINES)("named statements on %s", (engine) => {
  const databases = testDatabases(engine);
  afterEach(() => databases.dropAll());

  it("bind each value to its name wherever the text names it, whatever order the object lists them in", async () => {
    const database = await databases.fresh().raw();
    try {
      await database.transaction((trx) => database.runScript(trx, `CREATE TABLE items (k TEXT PRIMARY KEY, n BIGINT NOT NULL, m BIGINT NOT NULL)`));
      const insert = namedStatement<{ k: string; n: number; m: number }>(database, `INSERT INTO items (k, n, m) VALUES (:k, :n, :m)`);
      await insert.all(database.db, { m: 2, k: "x", n: 1 });
      const read = namedStatement<{ k: string; least: number }, { k: string; n: number; m: number }>(
        database,
        `SELECT k, n, m FROM items WHERE k = :k AND n >= :least AND m >= :least`,
      );
      expect(await read.all(database.db, { least: 1, k: "x" })).toEqual([{ k: "x", n: 1, m: 2 }]);
      expect(await read.all(database.db, { least: 2, k: "x" })).toEqual([]);
    } finally {
      await database.close();
    }
  });

  it("refuse a value the text does not name and a name given no value, before the database sees them", async () => {
    const database = await databases.fresh().raw();
    try {
      const read = namedStatement<{ k: string }, { k: string }>(database, `SELECT :k AS k`);
      await expect(read.all(database.db, { k: "x", extra: 1 } as { k: string })).rejects.toThrow("statement has no parameter :extra");
      await expect(read.all(database.db, {} as { k: string })).rejects.toThrow("statement parameter :k was not given");
    } finally {
      await database.close();
    }
  });
});
