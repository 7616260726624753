import { PLAN_LIMITS } from "../record-limits.js";
import { audited } from "./audit.js";
import type { Database } from "./database.js";
import { StoreError } from "../record-errors.js";
import { normalizeName } from "./names.js";
import { newId } from "./random.js";
import type { Plan, PlanInput, PlansRepository } from "./types.js";
import type { RowOf } from "./schema.js";

const COLUMNS = ["id", "name", "requests_per_minute", "allowance_questions", "price_per_million", "created_at", "allowed_models"] as const;

type PlanRow = RowOf<"plans", (typeof COLUMNS)[number]>;

const toPlan = (row: PlanRow): Plan => ({
  id: row.id,
  name: row.name,
  requestsPerMinute: row.requests_per_minute,
  allowanceQuestions: row.allowance_questions,
  pricePerMillion: row.price_per_million,
  createdAt: row.created_at,
  ...(row.allowed_models !== null && { allowedModels: JSON.parse(row.allowed_models) as string[] }),
});

export { PLAN_LIMITS };

export function createPlansRepository(database: Database, now: () => number): PlansRepository {
  const { db } = database;
  /**
   * An id always means that plan: by id first, and by name only when no plan has that id. One
   * query matching either would let a plan named like another's id stand in for it.
   */
  const get = async (idOrName: string) => {
    const byId = await db.selectFrom("plans").select(COLUMNS).where("id", "=", idOrName).executeTakeFirst();
    const row = byId ?? (await db.selectFrom("plans").select(COLUMNS).where("name", "=", idOrName).executeTakeFirst());
    return row && toPlan(row);
  };
  const uniqueName = async (write: () => Promise<unknown>, name: string) => {
    try {
      await write();
    } catch (error) {
      if (database.isUniqueViolation(error)) throw new StoreError("plan_exists", `A plan named ${name} already exists`);
      throw error;
    }
  };

  return {
    async create(input, by) {
      const { allowedModels, ...valid } = validPlanInput(input);
      const plan: Plan = { id: newId("plan"), ...valid, ...(allowedModels && { allowedModels }), createdAt: now() };
      refuseIdShapedName(plan.name);
      const { id: _id, created_at: _created, ...details } = toRow(plan);
      await uniqueName(
        () =>
          audited(
            database,
            now,
            by,
            (trx) => trx.insertInto("plans").values(toRow(plan)).execute(),
            () => ({ action: "plan.create", object: { kind: "plan", id: plan.id }, details }),
          ),
        plan.name,
      );
      return plan;
    },
    async update(idOrName, changes, by) {
      const current = await get(idOrName);
      if (!current) throw new StoreError("plan_not_found", `No plan with id or name ${idOrName}`);
      const { allowedModels, ...valid } = validPlanInput({ ...current, ...changes });
      const next: Plan = { ...current, ...valid, allowedModels: allowedModels ?? undefined };
      // A name kept from before this rule stays; only a new one must not look like an id.
      if (next.name !== current.name) refuseIdShapedName(next.name);
      const { id: _id, created_at: _created, ...set } = toRow(next);
      const before = toRow(current) as Record<string, unknown>;
      // Only what changed, as { field: { from, to } }.
      const changed = Object.fromEntries(
        Object.entries(set)
          .filter(([field, value]) => before[field] !== value)
          .map(([field, value]) => [field, { from: before[field], to: value }]),
      );
      await uniqueName(
        () =>
          audited(
            database,
            now,
            by,
            (trx) => trx.updateTable("plans").set(set).where("id", "=", next.id).execute(),
            () => (Object.keys(changed).length > 0 ? { action: "plan.update", object: { kind: "plan", id: next.id }, details: changed } : undefined),
          ),
        next.name,
      );
      return next;
    },
    list: async () => (await db.selectFrom("plans").select(COLUMNS).orderBy("created_at").orderBy("name").execute()).map(toPlan),
    get,
  };
}

/** How plan ids look (`plan_` and base62, like the built-in `plan_default`); no name may, so names never pass for ids. */
const ID_SHAPED = /^plan_[0-9A-Za-z]+$/;

function refuseIdShapedName(name: string): void {
  if (ID_SHAPED.test(name)) {
    throw new StoreError("invalid_input", `Plan name ${name} looks like a plan id (plan_ then letters and digits only); choose another name`);
  }
}

function toRow(plan: Plan): PlanRow {
  return {
    id: plan.id,
    name: plan.name,
    requests_per_minute: plan.requestsPerMinute,
    allowance_questions: plan.allowanceQuestions,
    price_per_million: plan.pricePerMillion,
    created_at: plan.createdAt,
    allowed_models: plan.allowedModels ? JSON.stringify(plan.allowedModels) : null,
  };
}

function validPlanInput(input: PlanInput): PlanInput {
  return {
    name: normalizeName(input.name, "Plan name"),
    requestsPerMinute: boundedInteger(input.requestsPerMinute, "requests per minute", 1, PLAN_LIMITS.requestsPerMinute),
    allowanceQuestions: boundedInteger(input.allowanceQuestions, "allowance", 0, PLAN_LIMITS.allowanceQuestions),
    pricePerMillion: boundedInteger(input.pricePerMillion, "price per million tokens (µ€)", 0, PLAN_LIMITS.pricePerMillion),
    allowedModels: validModels(input.allowedModels),
  };
}

/** Model ids as JUDGE_MODELS names them; the store cannot know which are served, so any well-formed id is kept. */
function validModels(models: unknown): string[] | null | undefined {
  if (models === undefined || models === null) return models;
  const ok =
    Array.isArray(models) &&
    models.length >= 1 &&
    models.length <= 100 &&
    models.every((m) => typeof m === "string" && /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/.test(m));
  if (!ok)
    throw new StoreError("invalid_input", `allowed models must be a list of 1 to 100 model ids (letters, digits, . _ : / @ -), got ${JSON.stringify(models)}`);
  return [...new Set(models as string[])];
}

export function boundedInteger(value: unknown, what: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new StoreError("invalid_input", `${what} must be a whole number from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}
