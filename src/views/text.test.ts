import { describe, expect, it } from "vitest";
import type { ApiKeyRecord } from "../store/store.js";
import { formatAccounts } from "../cli/accounts.js";
import { formatTable, formatTimestamp } from "./text.js";
import { formatKeyCreated, formatKeyRevoked, formatKeys } from "../cli/keys.js";

const record: ApiKeyRecord = {
  id: "key_abc",
  accountId: "acct_xyz",
  name: null,
  prefix: "tjs_AbCdEfGh",
  createdAt: Date.UTC(2025, 0, 31, 9, 5, 0, 123),
  lastUsedAt: null,
  revokedAt: null,
  limits: { requestsPerMinute: null, budgetMicro: null, expiresAt: null },
  spentMicro: 0,
  heldMicro: 0,
};

describe("CLI formatting", () => {
  it("aligns table columns and trims trailing spaces", () => {
    const table = formatTable(
      ["ID", "NAME"],
      [
        ["a", "Acme"],
        ["longer-id", ""],
      ],
    );
    expect(table, table).toBe(["ID         NAME", "a          Acme", "longer-id"].join("\n"));
  });

  it("prints times in UTC to the second and a dash for none", () => {
    expect(formatTimestamp(record.createdAt)).toBe("2025-01-31 09:05:00Z");
    expect(formatTimestamp(null)).toBe("-");
  });

  it("lists keys by prefix and status", () => {
    const text = formatKeys([record, { ...record, id: "key_def", name: "ci", revokedAt: 1 }]);
    const lines = text.split("\n");
    expect(lines, text).toHaveLength(3);
    expect(lines[1], text).toMatch(/^key_abc\s+tjs_AbCdEfGh\s+acct_xyz\s+-\s+active\s+€0.00\s+plan\s+never\s+2025-01-31 09:05:00Z\s+-$/);
    expect(lines[2], text).toMatch(/\sci\s+revoked\s/);
  });

  it("shows a created key once, with the warning to store it", () => {
    const key = `tjs_AbCdEfGh${"x".repeat(32)}`;
    const text = formatKeyCreated({ key, record });
    expect(text, text).toContain(`    ${key}\n`);
    expect(text, text).toContain("shown once, store it now");
  });

  it("tells a fresh revocation from an earlier one", () => {
    const revokedAt = Date.UTC(2025, 1, 1);
    expect(formatKeyRevoked({ ...record, revokedAt }, revokedAt)).toMatch(/^Revoked API key key_abc/);
    const again = formatKeyRevoked({ ...record, revokedAt }, revokedAt + 1);
    expect(again, again).toMatch(/was already revoked at 2025-02-01 00:00:00Z/);
  });

  it("suggests how to start when there are no accounts or keys", () => {
    expect(formatAccounts([])).toContain("judge accounts create --name");
    expect(formatKeys([])).toBe("No API keys.");
  });
});
