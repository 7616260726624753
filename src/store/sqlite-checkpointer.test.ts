import { statSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { Database } from "./database.js";
import { CHECKPOINT_INTERVAL_MS } from "./sqlite-checkpointer.js";
import { openSqlite } from "./sqlite.js";
import { useTempDir } from "./test-helpers.js";

/**
 * Checkpoints from a thread of their own: the database file takes the WAL's pages without the
 * serving connection ever checkpointing (its own threshold is far above what is written here).
 */
describe("SQLite's WAL checkpoints", () => {
  const temp = useTempDir();
  let database: Database | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
    temp.cleanup();
  });

  /** Writes about 2 MB (~500 pages) in one transaction; returns the database file's size before and after a checkpoint period. */
  async function writeAndWait(backgroundCheckpoints: boolean) {
    const path = `${temp.dir()}/${backgroundCheckpoints}.db`;
    const d = (database = openSqlite(path, { backgroundCheckpoints }));
    await d.transaction((trx) => d.runScript(trx, `CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL)`));
    const insert = d.statement<never>(`INSERT INTO blobs (data) VALUES (?)`);
    await d.transaction(async (trx) => {
      for (let i = 0; i < 500; i++) await insert.all(trx, [Buffer.alloc(4000, i)]);
    });
    const before = statSync(path).size;
    await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_INTERVAL_MS * 2.5));
    return { before, after: statSync(path).size };
  }

  it("are copied into the database file by the background thread within a few seconds", async () => {
    const { before, after } = await writeAndWait(true);
    expect(after - before, `database file ${before} → ${after} bytes`).toBeGreaterThan(1_900_000);
  });

  it("(without it, below SQLite's own threshold, stay in the WAL: what the first test measures is the thread's work)", async () => {
    // 500 pages is under the default autocheckpoint of 1,000, so nothing copies them here.
    const { before, after } = await writeAndWait(false);
    expect(after - before, `database file ${before} → ${after} bytes`).toBeLessThan(100_000);
  });
});
