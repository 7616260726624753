import { describe, expect, it } from "vitest";
import type { ApiKeyRecord } from "../services/types.js";
import { useCliHarness } from "./test-helpers.js";

/** `judge keys create` with limits, `keys update`, `keys rename` and the spend in `keys list`, through the real binary. */

describe("judge keys with limits", () => {
  const { judge, judgeOk, judgeJson, database } = useCliHarness();

  const account = async () => (await judgeJson<{ id: string }>("accounts", "create", "--name", "Acme")).id;

  it("creates a key with its own rpm, budget and expiry, changes and clears them, renames it, and lists its spend", async () => {
    const id = await account();
    const created = await judgeJson<{ key: string; record: ApiKeyRecord }>(
      "keys",
      "create",
      "--account",
      id,
      "--name",
      "batch",
      "--rpm",
      "30",
      "--budget",
      "5.000001",
      "--expires",
      "2099-12-31T18:00:00+02:00",
    );
    expect(created.record, JSON.stringify(created)).toMatchObject({
      name: "batch",
      limits: { requestsPerMinute: 30, budgetMicro: 5_000_001, expiresAt: Date.UTC(2099, 11, 31, 16) },
      spentMicro: 0,
      heldMicro: 0,
    });
    const text = await judgeOk("keys", "create", "--account", id, "--budget", "1");
    expect(text).toContain("limits: the plan's rate limit only, budget €1.00, never expires");

    const list = await judgeOk("keys", "list", "--account", id);
    const line = list.split("\n").find((l) => l.includes(created.record.id))!;
    expect(line, list).toMatch(/\sbatch\s+active\s+€0\.00 of €5\.000001\s+30\s+2099-12-31 16:00:00Z\s/);

    const updated = await judgeJson<ApiKeyRecord>("keys", "update", created.record.prefix, "--rpm", "none", "--budget", "7.50", "--expires", "never");
    expect(updated.limits, JSON.stringify(updated)).toEqual({ requestsPerMinute: null, budgetMicro: 7_500_000, expiresAt: null });
    const expired = await judgeOk("keys", "update", created.record.id, "--expires", "2020-01-01");
    expect(expired).toContain("expires 2020-01-01 00:00:00Z");
    expect(await judgeOk("keys", "list"), "an expiry in the past shows at once").toMatch(/\sbatch\s+expired\s/);

    const renamed = await judgeJson<ApiKeyRecord>("keys", "rename", created.record.id, "nightly batch");
    expect(renamed.name).toBe("nightly batch");
    expect((await judgeOk("keys", "rename", created.record.id, "again")).trim()).toBe(
      `Renamed API key ${created.record.id} (${created.record.prefix}) to "again".`,
    );
  });

  it("refuses bad limits with one line and exit 1, writing nothing", async () => {
    const id = await account();
    const bad = [
      ["--rpm", "0"],
      ["--rpm", "1.5"],
      ["--rpm", "none"],
      ["--budget", "-1"],
      ["--budget", "1e3"],
      ["--expires", "tomorrow"],
      ["--expires", "2026-12-31T10:00"],
      ["--expires", "2026-02-30"],
    ];
    for (const flags of bad) {
      const run = await judge("keys", "create", "--account", id, ...flags);
      expect([run.status, run.stderr.trim().split("\n").length], JSON.stringify({ flags, run })).toEqual([1, 1]);
      expect(run.stderr, JSON.stringify(run)).toMatch(new RegExp(`^judge: ${flags[0]} must be`));
    }
    expect((await judgeOk("keys", "list")).trim()).toBe("No API keys.");
    const none = await judge("keys", "update", "key_missing", "--rpm", "3");
    // The command it points at reaches this database.
    const list = `npx judge keys list --db ${database().location}`;
    expect([none.status, none.stderr], JSON.stringify(none)).toEqual([1, `judge: No API key matches "key_missing"; see \`${list}\` for ids and prefixes\n`]);
    const nothing = await judge("keys", "update", "key_missing");
    expect(nothing.stderr, JSON.stringify(nothing)).toBe("judge: nothing to change: give --rpm, --budget or --expires\n");
  });

  it("refuses to create a key whose expiry has passed, with one line and exit 1, creating nothing", async () => {
    const id = await account();
    const today = new Date().toISOString().slice(0, 10);
    for (const [expires, shown] of [
      ["2020-01-01", "2020-01-01T00:00:00.000Z"],
      [today, `${today}T00:00:00.000Z`],
    ]) {
      const run = await judge("keys", "create", "--account", id, "--expires", expires);
      expect([run.status, run.stdout, run.stderr], JSON.stringify(run)).toEqual([
        1,
        "",
        `judge: a new key's expiry must be in the future; ${shown} has passed\n`,
      ]);
    }
    expect((await judgeOk("keys", "list")).trim()).toBe("No API keys.");
    expect(await judgeOk("keys", "create", "--account", id, "--expires", "2099-01-01")).toContain("expires 2099-01-01 00:00:00Z");
  });
});
