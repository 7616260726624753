import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hashApiKey } from "../store/api-key.js";
import { createStore } from "../store/store.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
// The CLI reads JUDGE_* variables; the test's own environment must not steer it.
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.startsWith("JUDGE_")),
);

let dir: string;
let dbPath: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "judge-cli-"));
  dbPath = join(dir, "judge.db");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `judge` binary, the way `npx judge …` does. */
function judge(...args: string[]): Run {
  const result = spawnSync(process.execPath, ["bin/judge.js", ...args, "--db", dbPath], {
    cwd: repoRoot,
    env: cleanEnv,
    encoding: "utf8",
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs and requires success, printing the whole run on failure. */
function judgeOk(...args: string[]): string {
  const run = judge(...args);
  expect(run.status, `judge ${args.join(" ")}: ${JSON.stringify(run)}`).toBe(0);
  return run.stdout;
}

function judgeJson<T>(...args: string[]): T {
  const stdout = judgeOk(...args, "--json");
  try {
    return JSON.parse(stdout) as T;
  } catch {
    throw new Error(`judge ${args.join(" ")} --json printed non-JSON:\n${stdout}`);
  }
}

function expectOneLineUserError(run: Run, pattern: RegExp): void {
  const context = JSON.stringify(run);
  expect(run.status, context).toBe(1);
  expect(run.stderr.trim().split("\n"), context).toHaveLength(1);
  expect(run.stderr, context).toMatch(pattern);
  expect(run.stderr, `stack trace on stderr: ${context}`).not.toMatch(/\n\s+at /);
}

describe("judge CLI", () => {
  it("creates an account and a key, lists keys without the key, and revokes it by prefix", () => {
    const account = judgeJson<{ id: string; name: string }>("accounts", "create", "--name", "Acme");
    expect(account, JSON.stringify(account)).toMatchObject({
      id: expect.stringMatching(/^acct_/),
      name: "Acme",
    });

    const created = judgeOk("keys", "create", "--account", account.id, "--name", "ci");
    const key = created.match(/tjs_[0-9A-Za-z]{40}/)?.[0];
    expect(key, created).toBeDefined();
    expect(created, created).toContain("shown once, store it now");
    const prefix = key!.slice(0, 12);

    const listed = judgeOk("keys", "list");
    expect(listed, listed).toContain(prefix);
    expect(listed, listed).toContain("active");
    expect(listed, `plaintext key in list output:\n${listed}`).not.toContain(key!.slice(4));
    const listedJson = judgeOk("keys", "list", "--json");
    expect(listedJson, `plaintext key in list --json:\n${listedJson}`).not.toContain(key!.slice(4));

    const store = createStore({ path: dbPath });
    try {
      expect(store.keys.authenticate(key!)?.accountId).toBe(account.id);
      const revokedOutput = judgeOk("keys", "revoke", prefix);
      expect(revokedOutput, revokedOutput).toMatch(/^Revoked API key key_/);
      expect(store.keys.authenticate(key!), "revoked key still authenticates").toBeUndefined();
    } finally {
      store.close();
    }
    const afterRevoke = judgeOk("keys", "list", "--account", account.id);
    expect(afterRevoke, afterRevoke).toContain("revoked");
  });

  it("prints JSON that parses for every management command", () => {
    const account = judgeJson<{ id: string }>("accounts", "create", "--name", "Acme");
    const accounts = judgeJson<unknown[]>("accounts", "list");
    expect(accounts, JSON.stringify(accounts)).toEqual([account]);

    const created = judgeJson<{ key: string; record: { id: string; prefix: string } }>(
      "keys", "create", "--account", account.id,
    );
    expect(created.key, JSON.stringify(created)).toMatch(/^tjs_[0-9A-Za-z]{40}$/);
    expect(created.record.prefix, JSON.stringify(created)).toBe(created.key.slice(0, 12));

    const keys = judgeJson<{ id: string }[]>("keys", "list", "--account", account.id);
    expect(keys.map((k) => k.id), JSON.stringify(keys)).toEqual([created.record.id]);

    type Revoked = { id: string; revokedAt: number | null };
    const revoked = judgeJson<Revoked>("keys", "revoke", created.record.id);
    expect(revoked, JSON.stringify(revoked)).toMatchObject({
      id: created.record.id,
      revokedAt: expect.any(Number),
    });
  });

  it("reports an unknown account as one line on stderr with exit code 1", () => {
    expectOneLineUserError(
      judge("keys", "create", "--account", "acct_missing"),
      /^judge: No account with id acct_missing$/m,
    );
  });

  it("refuses an ambiguous prefix with exit code 1 and revokes nothing", () => {
    const account = judgeJson<{ id: string }>("accounts", "create", "--name", "Acme");
    const created = judgeJson<{ record: { prefix: string } }>("keys", "create", "--account", account.id);
    const raw = new BetterSqlite3(dbPath);
    raw
      .prepare("INSERT INTO api_keys (id, account_id, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?)")
      .run("key_twin", account.id, created.record.prefix, hashApiKey("twin"), 1);
    raw.close();

    expectOneLineUserError(judge("keys", "revoke", created.record.prefix), /matches 2 keys/);
    const keys = judgeJson<{ revokedAt: number | null }[]>("keys", "list");
    expect(keys.map((k) => k.revokedAt), JSON.stringify(keys)).toEqual([null, null]);
  });

  it("reports a revoke that matches no key as one line with exit code 1", () => {
    expectOneLineUserError(judge("keys", "revoke", "tjs_nothing1"), /No API key matches "tjs_nothing1"/);
  });
});
