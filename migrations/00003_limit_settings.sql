-- +goose Up
-- The run-time setting of each named limit (PUT /v1/admin/limits/{name} in docs/openapi.yaml). A row is inserted
-- from the environment at an instance's first start and wins from then on; every
-- change is announced with NOTIFY stagedoor_limit_settings in its transaction.
CREATE TABLE limit_settings (
    name       text PRIMARY KEY,
    rate       integer NOT NULL CHECK (rate >= 1),
    period_ms  bigint NOT NULL CHECK (period_ms >= 1),
    burst      integer NOT NULL CHECK (burst >= 1),
    mode       text NOT NULL CHECK (mode IN ('enforce', 'shadow', 'off')),
    updated_at timestamptz NOT NULL DEFAULT now(),
    updated_by text NOT NULL
);

-- +goose Down
DROP TABLE limit_settings;
