import type { Migration } from "./migration.js";

/**
 * Many models (docs/engines/many-models.md): the ledger and each hold record which model answered, and
 * a plan may name the models its keys may use (a JSON array of ids; NULL: every model). Plain
 * ADD COLUMNs, the same on both engines; rows written before read NULL.
 */
const MODELS_SQL = `
  ALTER TABLE reservations ADD COLUMN model TEXT;
  ALTER TABLE ledger ADD COLUMN model TEXT;
  ALTER TABLE plans ADD COLUMN allowed_models TEXT;
`;

export const migration: Migration = {
  version: 8,
  name: "ledger_model_and_plan_models",
  sql: { sqlite: MODELS_SQL, postgres: MODELS_SQL },
};
