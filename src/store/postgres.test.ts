import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { POSTGRES_TEST_URL } from "../testing/databases.js";
import { createStore } from "./store.js";

/** PostgreSQL as a managed service hands it out: a role that may use its schema but not create schemas. */

const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: POSTGRES_TEST_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("on PostgreSQL with a restricted role", () => {
  it("opens, migrates and serves its own existing schema without the right to create schemas", async () => {
    const name = `judge_restricted_${process.pid}_${Date.now().toString(36)}`;
    await admin(async (c) => {
      await c.query(`CREATE ROLE "${name}" LOGIN`);
      await c.query(`CREATE SCHEMA "${name}" AUTHORIZATION "${name}"`);
    });
    cleanups.push(() =>
      admin(async (c) => {
        await c.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
        await c.query(`DROP ROLE IF EXISTS "${name}"`);
      }),
    );
    const allowed = await admin((c) => c.query<{ may: boolean }>(`SELECT has_database_privilege('${name}', 'test', 'CREATE') AS may`));
    expect(allowed.rows[0].may, "the role must not be allowed to create schemas, or this test proves nothing").toBe(false);

    const store = await createStore({ location: `postgres://${name}@127.0.0.1:5432/test`, schema: name });
    try {
      const plan = await store.plans.create({ name: "p", requestsPerMinute: 1, allowanceQuestions: 1, pricePerMillion: 1 });
      expect((await store.plans.get(plan.id))?.name).toBe("p");
    } finally {
      await store.close();
    }
  });
});
