import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreEngine } from "../testing/databases.js";
import { tinyFixturePath } from "../testing/fixture.js";
import type { AccountJson, LedgerEntryJson } from "../views/money.js";
import { expectOneLineUserError, runJudge, useCliHarness, type Run } from "./test-helpers.js";

/**
 * `judge tasks …` on SQLite and PostgreSQL with the tiny fixture model (JUDGE_MODEL): a task
 * created from a `judge eval` dataset and fitted with --wait (the fit read through the model and
 * charged to the account's balance, as the ledger shows), its report shown, a bad line refused
 * before anything is stored, an account that cannot pay refused with nothing charged, and delete.
 */

let dir: string;
let model: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "tjs-tasks-cli-"));
  model = await tinyFixturePath();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const question = { type: "noul", instructions: "The speaker agrees." };
/** Six examples, half of them "yes": enough for folds, few enough to keep the fit fast. */
const lines = Array.from({ length: 6 }, (_, i) => ({
  id: `ex${i}`,
  state: `${i % 2 === 0 ? "yes" : "no"}, said speaker ${i}`,
  questions: { agrees: question },
  gold: { agrees: i % 2 === 0 },
}));
const dataset = (name: string, rows: readonly unknown[]) => {
  const path = join(dir, name);
  writeFileSync(path, `${rows.map((row) => (typeof row === "string" ? row : JSON.stringify(row))).join("\n")}\n`);
  return path;
};

interface TaskJson {
  id: string;
  name: string;
  examples: number;
  abstain_below: Record<string, number>;
  latest_fit: { state: string; examples: number; examples_read: number; input_tokens: number; charged_micro: number; error: unknown } | null;
  latest_version: {
    version: number;
    heads: Record<string, string>;
    report: { examples: number; chargedMicro: number; questions: Record<string, { chosen: string; plain: { accuracy: number } }> };
  } | null;
}

interface ShowJson {
  account: AccountJson;
  ledger: LedgerEntryJson[];
}

for (const engine of ["sqlite", "postgres"] as const satisfies readonly StoreEngine[]) {
  describe(`judge tasks on ${engine}`, () => {
    const { database, judgeOk, judgeJson } = useCliHarness(engine);
    // The model travels in the environment, as the server's settings do.
    const judge = (...args: string[]): Promise<Run> => {
      const { location, schema } = database();
      return runJudge([...args, "--db", location], { JUDGE_MODEL: model, JUDGE_THREADS: "1", ...(schema === undefined ? {} : { JUDGE_DB_SCHEMA: schema }) });
    };
    const ok = async (...args: string[]) => {
      const run = await judge(...args);
      expect(run.status, `judge ${args.join(" ")}: ${JSON.stringify(run)}`).toBe(0);
      return run;
    };
    /** An account on a plan without allowance, so that every example is paid from the balance. */
    const meteredAccount = async (topUp?: string) => {
      await judgeOk("plans", "create", "--name", "metered", "--rpm", "600", "--allowance", "0", "--price", "100");
      const account = (await judgeJson<AccountJson>("accounts", "create", "--name", "Acme", "--plan", "metered")).id;
      if (topUp) await judgeOk("balance", "top-up", "--account", account, "--amount", topUp);
      return account;
    };

    it("creates and fits a task with --wait, charges the balance for every example, shows the report, and deletes it", async () => {
      const account = await meteredAccount("1.00");
      const file = dataset("agrees.jsonl", lines);
      const run = await ok(
        "tasks",
        "create",
        "--account",
        account,
        "--name",
        "agrees",
        "--data",
        file,
        "--abstain-below",
        "agrees=0.6",
        "--wait",
        "--seed",
        "3",
        "--json",
      );
      const task = JSON.parse(run.stdout) as TaskJson;
      expect(task, run.stdout).toMatchObject({
        name: "agrees",
        examples: 6,
        abstain_below: { agrees: 0.6 },
        latest_fit: { state: "succeeded", examples: 6, examples_read: 6, error: null },
      });
      expect(task.latest_version?.version).toBe(1);
      const report = task.latest_version!.report;
      expect(report.examples).toBe(6);
      expect(report.questions.agrees.chosen, run.stdout).toMatch(/^(plain|level1|level2)$/);
      expect(task.latest_version!.heads.agrees).toBe(report.questions.agrees.chosen);
      expect(run.stderr, "progress on stderr").toMatch(/fit fit_\w+: 6\/6 examples read/);

      // Charged as six requests from the balance: the ledger's charges add up to what the fit says.
      const charged = task.latest_fit!.charged_micro;
      expect(charged).toBeGreaterThan(0);
      expect(report.chargedMicro).toBe(charged);
      const shown = await judgeJson<ShowJson>("accounts", "show", account, "--limit", "50");
      const charges = shown.ledger.filter((entry) => entry.kind === "charge");
      expect(charges, JSON.stringify(shown.ledger)).toHaveLength(6);
      expect(charges.reduce((sum, entry) => sum + entry.amount_micro, 0)).toBe(-charged);
      expect(charges.reduce((sum, entry) => sum + entry.input_tokens, 0)).toBe(task.latest_fit!.input_tokens);
      expect(shown.account.balance_micro).toBe(1_000_000 - charged);
      expect(shown.account.reserved_micro).toBe(0);
      expect(await judgeOk("ledger", "check")).toMatch(/^OK/);

      const text = await judgeOk("tasks", "show", "--account", account, "agrees");
      expect(text).toContain(`Task ${task.id} "agrees" of account ${account}: 6 examples`);
      expect(text).toMatch(/Version 1 \(fit fit_\w+, model \S+, created .*\); held-out accuracy \/ NLL:/);
      expect(text).toMatch(/\nagrees\s+(plain|level1|level2)\s+6\s+\d+\s+\d\.\d{3} \/ \d+\.\d{3}\s+\d\.\d{3} \/ \d+\.\d{3}\s+\d\.\d{3} \/ \d+\.\d{3}/);
      expect(await judgeOk("tasks", "list", "--account", account)).toMatch(new RegExp(`${task.id}\\s+agrees\\s+6\\s+1\\s+succeeded \\(v1\\)`));

      // A second fit of the same task, by name: version 2, charged again.
      const again = await ok("tasks", "fit", "--account", account, "agrees", "--wait", "--json");
      expect(JSON.parse(again.stdout), again.stdout).toMatchObject({ fit: { state: "succeeded", examples_read: 6 }, version: { version: 2 } });

      expect(await judgeOk("tasks", "delete", "--account", account, task.id)).toContain(`Deleted task ${task.id} ("agrees")`);
      expect((await judgeOk("tasks", "list", "--account", account)).trim()).toBe("No tasks.");
      expectOneLineUserError(await judge("tasks", "show", "--account", account, task.id), /^judge: No task "task_\w+" in account acct_\w+/);
      // The ledger keeps what the fits cost.
      expect((await judgeJson<ShowJson>("accounts", "show", account, "--limit", "50")).ledger.filter((e) => e.kind === "charge")).toHaveLength(12);
    });

    it("refuses a bad line with one line naming the line and the field, storing nothing", async () => {
      const account = await meteredAccount("1.00");
      const bad = dataset("bad.jsonl", [lines[0], lines[1], { ...lines[2], gold: { agrees: "maybe" } }, lines[3]]);
      const run = await judge("tasks", "create", "--account", account, "--name", "agrees", "--data", bad, "--wait");
      expectOneLineUserError(run, /^judge: .*bad\.jsonl: line 3\.gold\.agrees: must be true, false or a probability/);
      const broken = dataset("broken.jsonl", [lines[0], "{not json"]);
      expectOneLineUserError(await judge("tasks", "create", "--account", account, "--name", "agrees", "--data", broken), /line 2: not valid JSON/);
      expectOneLineUserError(
        await judge("tasks", "create", "--account", account, "--name", "agrees", "--data", dataset("ok.jsonl", lines), "--abstain-below", "agrees=1.5"),
        /^judge: --abstain-below must be QUESTION=FLOOR/,
      );
      expect((await judgeOk("tasks", "list", "--account", account)).trim()).toBe("No tasks.");
      expect((await judgeJson<{ tasks: unknown[] }>("tasks", "list", "--account", account)).tasks).toEqual([]);
    });

    it("refuses a fit the account cannot pay with insufficient_funds, charging nothing", async () => {
      const account = await meteredAccount();
      const run = await judge("tasks", "create", "--account", account, "--name", "agrees", "--data", dataset("agrees.jsonl", lines), "--wait");
      expectOneLineUserError(run, /^judge: task task_\w+ was created, but the fit was refused: insufficient_funds: .*nothing was charged/);
      const shown = await judgeJson<ShowJson>("accounts", "show", account);
      expect(shown.ledger, JSON.stringify(shown)).toEqual([]);
      expect([shown.account.balance_micro, shown.account.reserved_micro]).toEqual([0, 0]);
      // The task stays, unfitted (the refused fit was taken back), to be fitted once the account can pay.
      const show = await judgeJson<{ versions: unknown[]; fits: unknown[] }>("tasks", "show", "--account", account, "agrees");
      expect([show.versions, show.fits]).toEqual([[], []]);
      expectOneLineUserError(await judge("tasks", "fit", "--account", account, "agrees"), /give --wait/);
    });
  });
}
