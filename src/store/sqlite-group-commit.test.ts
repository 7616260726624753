import { statSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { Database } from "./database.js";
import { openSqlite } from "./sqlite.js";
import { useTempDir } from "./test-helpers.js";

/** SQLite's group commit (sqlite-group-commit.ts), seen from outside: the file and the results. */
describe("transactions on SQLite under load", () => {
  const temp = useTempDir();
  let database: Database | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
    temp.cleanup();
  });

  async function open(): Promise<{ database: Database; wal: () => number }> {
    const path = `${temp.dir()}/group.db`;
    database = openSqlite(path);
    const d = database;
    await d.transaction((trx) => d.runScript(trx, `CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO counter VALUES (1, 0);`));
    return { database: d, wal: () => statSync(`${path}-wal`).size };
  }

  const add = (database: Database) => database.statement<{ n: number }>(`UPDATE counter SET n = n + 1 WHERE id = 1 RETURNING n`);

  it("that arrive together share one commit: each sees the ones before it, the page is written once", async () => {
    const { database, wal } = await open();
    const increment = add(database);
    const before = wal();
    const seen = await Promise.all(Array.from({ length: 20 }, () => database.transaction(async (trx) => (await increment.all(trx, []))[0].n)));
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    // One commit writes each changed page once (4 KB + a 24-byte frame header); 20 commits would write it 20 times.
    const frames = (wal() - before) / (4096 + 24);
    expect(frames, `WAL grew by ${wal() - before} bytes`).toBeLessThanOrEqual(2);
  });

  it("roll back one that fails to its own savepoint, and commit the others", async () => {
    const { database } = await open();
    const increment = add(database);
    const outcomes = await Promise.allSettled([
      database.transaction((trx) => increment.all(trx, [])),
      database.transaction(async (trx) => {
        await increment.all(trx, []);
        throw new Error("this one fails");
      }),
      database.transaction((trx) => increment.all(trx, [])),
    ]);
    expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : String(o.reason)))).toEqual([[{ n: 1 }], "Error: this one fails", [{ n: 2 }]]);
    const [{ n }] = await database.statement<{ n: number }>(`SELECT n FROM counter`).all(database.db, []);
    expect(n).toBe(2);
  });

  it("let a write of its own join a batch, and never join someone else's open transaction", async () => {
    const { database } = await open();
    const increment = add(database);
    const results = await Promise.allSettled([
      database.transaction(async (trx) => {
        await increment.all(trx, []);
        throw new Error("rolled back");
      }),
      increment.all(database.db, []),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "fulfilled"]);
    expect((results[1] as PromiseFulfilledResult<{ n: number }[]>).value).toEqual([{ n: 1 }]);
  });

  it("fail, rather than hang, once the database is closed", async () => {
    const { database: d } = await open();
    await d.close();
    database = undefined;
    await expect(d.transaction(async () => 1)).rejects.toThrow();
  });
});
