import type { Command } from "commander";
import { globalOptions, isInMemory, resolveConfig } from "./context.js";

/**
 * The commands the CLI prints for a person to run next ("Create an API key for it with: …"),
 * written so that copying one works: through npx (the `judge` bin is on PATH only inside npm
 * scripts) and on the database this command used (a `--db` or an inline JUDGE_DB is gone by the
 * next command). A database in memory dies with the command, so no command is printed for it.
 */
export interface FollowUp {
  /** `npx judge <args>` on this command's database; undefined where no later command can reach it. */
  command(args: string): string | undefined;
  /** "<lead> <command>", or, where no later command can reach the database, a sentence saying so. */
  line(lead: string, args: string): string;
}

/** What a plain `npx judge` opens (the schema's default JUDGE_DB, config/schema.ts): no --db needed to reach it. */
const DEFAULT_DB = "data/judge.db";

export const IN_MEMORY_NOTE = "The database is in memory (:memory:): it is gone when this command exits, so no later command can reach what it held.";

/** A word for a POSIX shell: as it is when nothing in it is special, else single-quoted. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The `--db` a printed command needs to reach `db`. A PostgreSQL URL named by the environment
 * stays there (the next command in that shell has it, and the password is never printed); one
 * given as --db is repeated with its password as a placeholder to fill in.
 */
function dbOption(db: string, fromFlag: boolean): string {
  if (/^postgres(ql)?:\/\//i.test(db)) {
    if (!fromFlag) return "";
    return ` --db ${shellWord(db.replace(/^(postgres(?:ql)?:\/\/[^:@/]*:)[^@/]*@/i, "$1<password>@"))}`;
  }
  return db === DEFAULT_DB ? "" : ` --db ${shellWord(db)}`;
}

/** The follow-ups for commands on `db` (`fromFlag`: given as --db rather than by JUDGE_DB or the default). */
export function followUpFor(db: string, fromFlag: boolean, unreachable = IN_MEMORY_NOTE): FollowUp {
  const command = (args: string) => (isInMemory(db) ? undefined : `npx judge ${args}${dbOption(db, fromFlag)}`);
  return {
    command,
    line: (lead, args) => {
      const next = command(args);
      return next === undefined ? unreachable : `${lead} ${next}`;
    },
  };
}

/** The follow-ups for what `command` ran on (its --db, else the environment's JUDGE_DB). */
export function followUp(command: Command): FollowUp {
  return followUpFor(resolveConfig(command).db, globalOptions(command).db !== undefined);
}

/**
 * What `judge serve` prints on an empty database: the commands that make the first account and
 * key, then a first question to `url`. The database is named as the CLI's own follow-ups name it
 * (a PostgreSQL URL stays in the environment, so its password is not logged).
 */
export function firstKeyHelp(db: string, url: string): string {
  const next = followUpFor(db, false);
  const account = next.command('accounts create --name "My team"');
  const key = next.command("keys create --account <account id printed above>");
  return [
    "",
    ...(account && key
      ? ["No API keys exist yet. Create an account and its first key with:", `  ${account}`, `  ${key}`]
      : [
          "No API keys exist yet, and no `judge` command can reach this database: it is in memory (:memory:).",
          "Create an account and its first key through the admin API (JUDGE_ADMIN_TOKEN): POST /admin/v1/accounts, then POST /admin/v1/accounts/{id}/keys.",
        ]),
    "Then ask a first question with the key it prints:",
    `  curl -s ${url}/v1/systemone -H "Authorization: Bearer <key>" -H "Content-Type: application/json" \\`,
    `    -d '{"state": "I was charged twice.", "questions": {"angry": {"type": "noul", "instructions": "The customer is angry."}}}'`,
    "",
  ].join("\n");
}
