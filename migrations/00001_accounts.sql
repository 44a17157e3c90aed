-- +goose Up
-- Buyers and organizers share one table; kind tells them apart.
CREATE TABLE accounts (
    id            uuid PRIMARY KEY,
    kind          text NOT NULL CHECK (kind IN ('buyer', 'organizer')),
    email         text NOT NULL UNIQUE CHECK (email = lower(btrim(email))),
    name          text NOT NULL,
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- A session is stored only as the SHA-256 of its token.
CREATE TABLE sessions (
    token_hash bytea PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX sessions_account_id ON sessions (account_id);

-- +goose Down
DROP TABLE sessions;
DROP TABLE accounts;
