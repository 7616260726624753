import type { Database } from "./db.js";
import { normalizeName } from "./names.js";
import { newId } from "./random.js";
import type { Account, AccountsRepository } from "./types.js";

interface AccountRow {
  id: string;
  name: string;
  created_at: number;
}

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
});

export function createAccountsRepository(db: Database, now: () => number): AccountsRepository {
  const insert = db.prepare("INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)");
  const selectAll = db.prepare<[], AccountRow>(
    "SELECT id, name, created_at FROM accounts ORDER BY created_at, id",
  );
  const selectById = db.prepare<[string], AccountRow>(
    "SELECT id, name, created_at FROM accounts WHERE id = ?",
  );

  return {
    create(input) {
      const account: Account = {
        id: newId("acct"),
        name: normalizeName(input.name, "Account name"),
        createdAt: now(),
      };
      insert.run(account.id, account.name, account.createdAt);
      return account;
    },
    list: () => selectAll.all().map(toAccount),
    get(id) {
      const row = selectById.get(id);
      return row && toAccount(row);
    },
  };
}
