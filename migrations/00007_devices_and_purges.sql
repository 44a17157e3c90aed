-- +goose Up
-- Devices that logged in before (internal/auth): a login that presents a live
-- device token of its account is limited per device (login-device) instead of
-- by login-address and login-email, so that guessing at an email from elsewhere
-- never locks its owner out of a device they used. Like sessions, a device
-- token is stored only as its SHA-256.
CREATE TABLE devices (
    token_hash bytea PRIMARY KEY,
    id         uuid NOT NULL UNIQUE,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX devices_account_id ON devices (account_id);

-- The janitor's work lists: expired devices and sessions, and holds that
-- ended long ago.
CREATE INDEX devices_expires_at ON devices (expires_at);
CREATE INDEX sessions_expires_at ON sessions (expires_at);
CREATE INDEX holds_ended_at ON holds (ended_at) WHERE status IN ('expired', 'released');
CREATE INDEX orders_hold_id ON orders (hold_id);

-- +goose Down
DROP INDEX orders_hold_id;
DROP INDEX holds_ended_at;
DROP INDEX sessions_expires_at;
DROP TABLE devices;
