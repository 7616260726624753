import type { Migration } from "./migration.js";

/**
 * Tasks (docs/concepts/tasks.md): a tenant's questions and labelled examples, the fits that read
 * them through a model, and the versions those fits leave. A version is immutable once written
 * (a trigger refuses UPDATE), so a request that names one is always answered by the same heads;
 * deleting a task deletes its examples, fits and versions with it. One fit per task runs at a
 * time: a partial unique index over the running ones, the same on both engines.
 */
const sqlite = `
  CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,
    definition TEXT NOT NULL,
    examples INTEGER NOT NULL CHECK (examples >= 0),
    created_at INTEGER NOT NULL,
    UNIQUE (account_id, name)
  ) STRICT;
  CREATE TABLE task_examples (
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    position INTEGER NOT NULL CHECK (position >= 0),
    body TEXT NOT NULL,
    PRIMARY KEY (task_id, position)
  ) STRICT;
  CREATE TABLE task_fits (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    key_id TEXT,
    model TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('running', 'succeeded', 'failed')),
    total INTEGER NOT NULL CHECK (total >= 0),
    done INTEGER NOT NULL DEFAULT 0 CHECK (done >= 0),
    input_tokens INTEGER NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    charged_micro INTEGER NOT NULL DEFAULT 0 CHECK (charged_micro >= 0),
    error_code TEXT,
    error_message TEXT,
    version INTEGER,
    owner TEXT NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    finished_at INTEGER
  ) STRICT;
  CREATE UNIQUE INDEX task_fits_one_running ON task_fits (task_id) WHERE state = 'running';
  CREATE INDEX task_fits_by_task ON task_fits (task_id, created_at);
  CREATE TABLE task_versions (
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    version INTEGER NOT NULL CHECK (version >= 1),
    fit_id TEXT NOT NULL,
    model TEXT NOT NULL,
    binding TEXT NOT NULL,
    heads TEXT NOT NULL,
    report TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, version)
  ) STRICT;
  CREATE TRIGGER task_versions_immutable BEFORE UPDATE ON task_versions
    BEGIN SELECT RAISE(ABORT, 'task versions are immutable'); END;
`;

const postgres = `
  CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,
    definition TEXT NOT NULL,
    examples BIGINT NOT NULL CHECK (examples >= 0),
    created_at BIGINT NOT NULL,
    UNIQUE (account_id, name)
  );
  CREATE TABLE task_examples (
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    position BIGINT NOT NULL CHECK (position >= 0),
    body TEXT NOT NULL,
    PRIMARY KEY (task_id, position)
  );
  CREATE TABLE task_fits (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    key_id TEXT,
    model TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('running', 'succeeded', 'failed')),
    total BIGINT NOT NULL CHECK (total >= 0),
    done BIGINT NOT NULL DEFAULT 0 CHECK (done >= 0),
    input_tokens BIGINT NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    charged_micro BIGINT NOT NULL DEFAULT 0 CHECK (charged_micro >= 0),
    error_code TEXT,
    error_message TEXT,
    version BIGINT,
    owner TEXT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    finished_at BIGINT
  );
  CREATE UNIQUE INDEX task_fits_one_running ON task_fits (task_id) WHERE state = 'running';
  CREATE INDEX task_fits_by_task ON task_fits (task_id, created_at);
  CREATE TABLE task_versions (
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    version BIGINT NOT NULL CHECK (version >= 1),
    fit_id TEXT NOT NULL,
    model TEXT NOT NULL,
    binding TEXT NOT NULL,
    heads TEXT NOT NULL,
    report TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (task_id, version)
  );
  CREATE FUNCTION task_versions_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'task versions are immutable'; END $$;
  CREATE TRIGGER task_versions_no_update BEFORE UPDATE ON task_versions
    FOR EACH ROW EXECUTE FUNCTION task_versions_immutable();
`;

export const migration: Migration = { version: 9, name: "tasks", sql: { sqlite, postgres } };
