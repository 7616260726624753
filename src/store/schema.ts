import type { Generated, Selectable } from "kysely";

/**
 * The tables as the query layer sees them, on SQLite and PostgreSQL alike. Every integer column is
 * BIGINT on PostgreSQL and INTEGER on SQLite, and reads back as a checked safe integer (see
 * safe-integers.ts). Timestamps are milliseconds since the Unix epoch; money is micro-euros.
 */
export interface Tables {
  schema_migrations: { version: number; name: string; applied_at: number };
  plans: {
    id: string;
    name: string;
    requests_per_minute: number;
    allowance_questions: number;
    price_per_million: number;
    created_at: number;
    /** A JSON array of model ids; NULL: every model. */
    allowed_models: string | null;
  };
  accounts: {
    id: string;
    name: string;
    created_at: number;
    plan_id: string;
    balance_micro: Generated<number>;
    reserved_micro: Generated<number>;
    /** Set while the account is disabled: its keys get 401 account_disabled. */
    disabled_at: Generated<number | null>;
  };
  api_keys: {
    id: string;
    account_id: string;
    name: string | null;
    prefix: string;
    hash: string;
    created_at: number;
    last_used_at: number | null;
    revoked_at: number | null;
    requests_per_minute: number | null;
    budget_micro: number | null;
    expires_at: number | null;
    spent_micro: Generated<number>;
    held_micro: Generated<number>;
  };
  plan_usage: { account_id: string; period_start: number; used: Generated<number>; reserved: Generated<number> };
  ledger: {
    id: Generated<number>;
    account_id: string;
    at: number;
    kind: "top_up" | "charge" | "plan" | "adjustment";
    amount_micro: number;
    questions: Generated<number>;
    input_tokens: Generated<number>;
    period_start: number | null;
    request_id: string | null;
    note: string | null;
    /** The API key of a judgment (migrations/0007-server-errors-and-ledger-keys.ts); null for other kinds and older entries. */
    key_id: string | null;
    /** The model that answered (charge and plan entries); NULL for others and for entries before models were recorded. */
    model: string | null;
  };
  server_errors: {
    id: Generated<number>;
    at: number;
    method: string;
    route: string;
    status: number;
    code: string | null;
    request_id: string | null;
  };
  reservations: {
    id: string;
    account_id: string;
    billed_to: "plan" | "balance";
    questions: number;
    input_tokens: number;
    amount_micro: number;
    period_start: number;
    request_id: string;
    created_at: number;
    expires_at: number;
    key_id: string | null;
    model: string | null;
  };
  /** Fixed-window counters of the database rate limiter; `key` names what is limited. */
  rate_windows: { key: string; window_start: number; count: number };
  idempotency_keys: {
    account_id: string;
    key: string;
    request_hash: string;
    owner: string;
    state: "running" | "done";
    response: string | null;
    created_at: number;
    expires_at: number;
  };
  admin_tokens: {
    id: string;
    name: string;
    prefix: string;
    hash: string;
    created_at: number;
    last_used_at: number | null;
    revoked_at: number | null;
  };
  /** Append-only: who did what to which object. `details` is JSON, never a secret. */
  audit_log: {
    id: Generated<number>;
    at: number;
    actor: string;
    actor_token_id: string | null;
    action: string;
    object_kind: string;
    object_id: string;
    account_id: string | null;
    details: string;
  };
  /** A tenant's task (migrations/0009-tasks.ts): `definition` is JSON (its questions and floors). */
  tasks: { id: string; account_id: string; name: string; definition: string; examples: number; created_at: number };
  /** A task's labelled examples in upload order; `body` is the example's JSON. */
  task_examples: { task_id: string; position: number; body: string };
  task_fits: {
    id: string;
    task_id: string;
    account_id: string;
    key_id: string | null;
    model: string;
    state: "running" | "succeeded" | "failed";
    total: number;
    done: Generated<number>;
    input_tokens: Generated<number>;
    charged_micro: Generated<number>;
    error_code: string | null;
    error_message: string | null;
    version: number | null;
    owner: string;
    heartbeat_at: number;
    created_at: number;
    finished_at: number | null;
  };
  /** Immutable (a trigger refuses UPDATE): `binding`, `heads` and `report` are JSON. */
  task_versions: { task_id: string; version: number; fit_id: string; model: string; binding: string; heads: string; report: string; created_at: number };
}

/** A table's row as a query reads it (generated columns as their values), of the columns named: the repositories' row types. */
export type RowOf<T extends keyof Tables, C extends keyof Selectable<Tables[T]> = keyof Selectable<Tables[T]>> = Pick<Selectable<Tables[T]>, C>;
