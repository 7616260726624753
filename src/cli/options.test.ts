import { describe, expect, it } from "vitest";
import { CliError } from "./context.js";
import { formatLedgerCheck } from "./ledger.js";
import { parseEurosOption, parseWholeNumber } from "./options.js";
import { planChanges } from "./plans.js";
import { formatMoney, formatSignedMoney } from "../views/money.js";

const topUp = { minMicro: 1, maxMicro: Number.MAX_SAFE_INTEGER, example: "12.50" };

describe("CLI option parsing", () => {
  it("accepts only plain digits for whole numbers, within range", () => {
    expect(parseWholeNumber("600", "--rpm", { min: 1, max: 1000 })).toBe(600);
    expect(parseWholeNumber(" 0 ", "--allowance", { min: 0, max: 10 })).toBe(0);
    for (const text of ["0", "1001", "1.5", "1e3", "-1", "0x10", "", "ten", "99999999999999999999"]) {
      expect(() => parseWholeNumber(text, "--rpm", { min: 1, max: 1000 }), text).toThrow(CliError);
    }
  });

  it("reads euros exactly into micro-euros and refuses signs, exponents, extra decimals and zero", () => {
    expect(parseEurosOption("12.50", "--amount", topUp)).toBe(12_500_000);
    expect(parseEurosOption("0.000001", "--amount", topUp)).toBe(1);
    expect(parseEurosOption("12.345678", "--amount", topUp)).toBe(12_345_678);
    for (const text of ["-1", "1e3", "1.0000001", "0", "0.0", "+1", ".5", "1,5", "NaN", "Infinity"]) {
      expect(() => parseEurosOption(text, "--amount", topUp), text).toThrow(/^--amount must be an amount of euros/);
    }
    expect(parseEurosOption("0", "--price", { minMicro: 0, maxMicro: 10, example: "0.05" })).toBe(0);
    expect(() => parseEurosOption("0.000011", "--price", { minMicro: 0, maxMicro: 10, example: "0.05" })).toThrow(
      /from €0\.00 to €0\.00001 .* got "0\.000011"/,
    );
  });

  it("turns only the plan options given into changes", () => {
    expect(planChanges({})).toEqual({});
    expect(planChanges({ price: "0.05", allowance: "0" })).toEqual({ pricePerMillion: 50_000, allowanceQuestions: 0 });
    expect(() => planChanges({ rpm: "0" })).toThrow(/--rpm must be a whole number from 1/);
    expect(() => planChanges({ allowance: "-1" })).toThrow(/--allowance must be a whole number from 0/);
  });
});

describe("CLI money and ledger formatting", () => {
  it("prints euros with the sign in front of the currency", () => {
    expect(formatMoney(12_500_000)).toBe("€12.50");
    expect(formatMoney(-1_000)).toBe("-€0.001");
    expect(formatSignedMoney(1)).toBe("+€0.000001");
    expect(formatSignedMoney(0)).toBe("€0.00");
    expect(formatSignedMoney(-10_000)).toBe("-€0.01");
  });

  it("shows balance mismatches in euros and usage mismatches as counts", () => {
    const text = formatLedgerCheck({
      ok: false,
      accounts: 3,
      mismatches: [
        { accountId: "acct_a", what: "balance", unit: "micro_eur", column: 12_500_001, ledgerSum: 12_500_000 },
        { accountId: "acct_b", what: "period 2025-01-01T00:00:00.000Z used", unit: "questions", column: 4, ledgerSum: 3 },
      ],
    });
    expect(text.split("\n"), text).toEqual([
      "FAILED: 2 mismatch(es), 3 accounts checked:",
      "  acct_a balance: stored €12.500001, ledger says €12.50",
      "  acct_b period 2025-01-01T00:00:00.000Z used: stored 4, ledger says 3",
    ]);
  });
});
