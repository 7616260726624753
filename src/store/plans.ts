import BetterSqlite3 from "better-sqlite3";
import type { Database } from "./db.js";
import { StoreError } from "./errors.js";
import { normalizeName } from "./names.js";
import { newId } from "./random.js";
import type { Plan, PlanInput, PlansRepository } from "./types.js";

interface PlanRow {
  id: string;
  name: string;
  requests_per_minute: number;
  allowance_questions: number;
  price_per_million: number;
  created_at: number;
}

const COLUMNS = "id, name, requests_per_minute, allowance_questions, price_per_million, created_at";

const toPlan = (row: PlanRow): Plan => ({
  id: row.id,
  name: row.name,
  requestsPerMinute: row.requests_per_minute,
  allowanceQuestions: row.allowance_questions,
  pricePerMillion: row.price_per_million,
  createdAt: row.created_at,
});

/** Upper bounds that keep every product and sum on the money path inside safe integers. */
export const PLAN_LIMITS = {
  requestsPerMinute: 1_000_000,
  allowanceQuestions: 1_000_000_000,
  pricePerMillion: 1_000_000_000_000,
} as const;

export function createPlansRepository(db: Database, now: () => number): PlansRepository {
  const insert = db.prepare(`INSERT INTO plans (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`);
  const selectAll = db.prepare<[], PlanRow>(`SELECT ${COLUMNS} FROM plans ORDER BY created_at, name`);
  const selectOne = db.prepare<[string, string], PlanRow>(`SELECT ${COLUMNS} FROM plans WHERE id = ? OR name = ?`);
  const updateRow = db.prepare(
    `UPDATE plans SET name = @name, requests_per_minute = @requests_per_minute,
       allowance_questions = @allowance_questions, price_per_million = @price_per_million WHERE id = @id`,
  );

  const get = (idOrName: string) => {
    const row = selectOne.get(idOrName, idOrName);
    return row && toPlan(row);
  };

  return {
    create(input) {
      const plan: Plan = { id: newId("plan"), ...validPlanInput(input), createdAt: now() };
      uniqueName(() =>
        insert.run(plan.id, plan.name, plan.requestsPerMinute, plan.allowanceQuestions, plan.pricePerMillion, plan.createdAt),
      plan.name);
      return plan;
    },
    update(idOrName, changes) {
      const current = get(idOrName);
      if (!current) throw new StoreError("plan_not_found", `No plan with id or name ${idOrName}`);
      const next = { ...current, ...validPlanInput({ ...current, ...changes }) };
      uniqueName(
        () =>
          updateRow.run({
            id: next.id,
            name: next.name,
            requests_per_minute: next.requestsPerMinute,
            allowance_questions: next.allowanceQuestions,
            price_per_million: next.pricePerMillion,
          }),
        next.name,
      );
      return next;
    },
    list: () => selectAll.all().map(toPlan),
    get,
  };
}

function validPlanInput(input: PlanInput): PlanInput {
  return {
    name: normalizeName(input.name, "Plan name"),
    requestsPerMinute: boundedInteger(input.requestsPerMinute, "requests per minute", 1, PLAN_LIMITS.requestsPerMinute),
    allowanceQuestions: boundedInteger(input.allowanceQuestions, "allowance", 0, PLAN_LIMITS.allowanceQuestions),
    pricePerMillion: boundedInteger(input.pricePerMillion, "price per million tokens (µ€)", 0, PLAN_LIMITS.pricePerMillion),
  };
}

function boundedInteger(value: unknown, what: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new StoreError("invalid_input", `${what} must be a whole number from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

function uniqueName(write: () => unknown, name: string): void {
  try {
    write();
  } catch (error) {
    if (error instanceof BetterSqlite3.SqliteError && error.code === "SQLITE_CONSTRAINT_UNIQUE") {
      throw new StoreError("plan_exists", `A plan named ${name} already exists`);
    }
    throw error;
  }
}
