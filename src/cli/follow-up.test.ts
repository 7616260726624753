import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { firstKeyHelp, followUpFor, IN_MEMORY_NOTE, shellWord } from "./follow-up.js";
import { expectOneLineUserError, runInRepo, runJudge, type Run } from "./test-helpers.js";

/**
 * The commands the CLI prints to run next are copied by hand: each must work as printed, through
 * npx and on the database the printing command used; for a database in memory, which no later
 * command can reach, the CLI says so instead of printing one.
 */

// A space in the path: the printed --db must survive the shell.
const dir = mkdtempSync(join(tmpdir(), "judge follow-up "));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a printed command as the person would paste it: a shell in the project, no JUDGE_* set. */
function paste(command: string): Promise<Run> {
  return runInRepo("sh", ["-c", command], { npm_config_update_notifier: "false" });
}

/** The command printed after `lead` in `output`. */
function printedAfter(output: string, lead: string): string {
  const line = output.split("\n").find((l) => l.startsWith(lead));
  expect(line, output).toBeDefined();
  return line!.slice(lead.length).trim();
}

describe("the follow-up commands the CLI prints", () => {
  it("run as printed after accounts create, plans create, accounts list and keys revoke on a --db", async () => {
    const db = join(dir, "judge.db");
    const created = await runJudge(["--create", "--db", db, "accounts", "create", "--name", "Acme"]);
    expect(created.status, JSON.stringify(created)).toBe(0);
    const next = printedAfter(created.stdout, "Create an API key for it with:");
    expect(next).toBe(`npx judge keys create --account ${created.stdout.match(/acct_\w+/)![0]} --db ${shellWord(db)}`);
    const key = await paste(next);
    expect([key.status, key.stdout], JSON.stringify(key)).toEqual([0, expect.stringMatching(/^Created API key key_\w+ /)]);

    const plan = await runJudge(["plans", "create", "--db", db, "--name", "team plan", "--rpm", "10", "--allowance", "0", "--price", "0.05"]);
    expect(plan.status, JSON.stringify(plan)).toBe(0);
    const setPlan = printedAfter(plan.stdout, "Put an account on it with:").replace("<account id>", created.stdout.match(/acct_\w+/)![0]);
    const moved = await paste(setPlan);
    expect([moved.status, moved.stdout.trim()], JSON.stringify(moved)).toEqual([0, expect.stringMatching(/is now on plan team plan\.$/)]);

    const empty = join(dir, "empty.db");
    const none = await runJudge(["--create", "--db", empty, "accounts", "list"]);
    const first = await paste(printedAfter(none.stdout, "No accounts yet. Create one with:").replace("<name>", "First"));
    expect([first.status, first.stdout], JSON.stringify(first)).toEqual([0, expect.stringMatching(/^Created account acct_\w+ \(First\)/)]);

    const missing = await runJudge(["keys", "revoke", "--db", db, "tjs_nothing"]);
    const list = await paste(missing.stderr.match(/see `([^`]+)`/)![1]);
    expect([list.status, list.stdout], JSON.stringify(list)).toEqual([0, expect.stringMatching(/^ID\s+PREFIX/)]);
  });

  it("on a database in memory, refuse without --create, and with it say that nothing can reach it instead of printing a command", async () => {
    const refused = await runJudge(["--db", ":memory:", "accounts", "create", "--name", "Acme"]);
    expectOneLineUserError(
      refused,
      /^judge: --db :memory: is a new, empty database for every command, so there is nothing in it to administer; give the file or postgres:\/\/ URL the server uses\n$/,
    );
    const created = await runJudge(["--create", "--db", ":memory:", "accounts", "create", "--name", "Acme"]);
    expect([created.status, created.stdout.split("\n")[1]], JSON.stringify(created)).toEqual([0, IN_MEMORY_NOTE]);
    expect(created.stdout).not.toMatch(/judge /);
    const listed = await runJudge(["--create", "--db", ":memory:", "accounts", "list"]);
    expect(listed.stdout.trim()).toBe(`No accounts yet. ${IN_MEMORY_NOTE}`);
    const missing = await runJudge(["--create", "--db", ":memory:", "keys", "revoke", "tjs_nothing"]);
    expect([missing.status, missing.stderr]).toEqual([1, 'judge: No API key matches "tjs_nothing" (the database is in memory and empty)\n']);
  });
});

describe("followUpFor", () => {
  it("names the database only where a plain `npx judge` would miss it, quoted for the shell", () => {
    expect(followUpFor("data/judge.db", true).command("keys list")).toBe("npx judge keys list");
    expect(followUpFor("data/judge.db", false).command("keys list")).toBe("npx judge keys list");
    expect(followUpFor("/srv/judge/judge.db", false).command("keys list")).toBe("npx judge keys list --db /srv/judge/judge.db");
    expect(followUpFor("/tmp/it's here.db", true).command("keys list")).toBe(`npx judge keys list --db '/tmp/it'\\''s here.db'`);
  });

  it("never prints a PostgreSQL password: the environment's URL stays there, a --db's password is a placeholder", () => {
    const url = "postgres://judge:s3cret@db.internal:5432/judge";
    expect(followUpFor(url, false).command("keys list")).toBe("npx judge keys list");
    expect(followUpFor(url, true).command("keys list")).toBe("npx judge keys list --db 'postgres://judge:<password>@db.internal:5432/judge'");
    expect(followUpFor("postgresql://db.internal:5432/judge", true).command("keys list")).toBe("npx judge keys list --db postgresql://db.internal:5432/judge");
  });

  it("prints no command for a database in memory, and says why", () => {
    for (const db of [":memory:", ""]) {
      expect(followUpFor(db, true).command("keys list")).toBeUndefined();
      expect(followUpFor(db, true).line("Then:", "keys list")).toBe(IN_MEMORY_NOTE);
    }
  });

  it("judge serve's first-key help points at the admin API when the database is in memory", () => {
    const help = firstKeyHelp(":memory:", "http://127.0.0.1:8080");
    expect(help).not.toMatch(/npx judge/);
    expect(help).toContain("POST /admin/v1/accounts, then POST /admin/v1/accounts/{id}/keys");
    expect(firstKeyHelp("x.db", "http://127.0.0.1:8080")).toContain("  npx judge keys create --account <account id printed above> --db x.db\n");
  });
});
