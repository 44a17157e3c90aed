-- +goose Up
-- The waiting room's queue tokens (internal/queuetoken).
--
-- queue_token_keys (owner: internal/queuetoken): the secret every instance
-- signs and verifies queue tokens with (HMAC-SHA256), made by the first
-- instance that needs it; a token one instance hands out is good on every
-- other. One row (id 1) today; the id is in each token, so a new key can be
-- added beside it later. The secret never leaves the server.
CREATE TABLE queue_token_keys (
    id         smallint PRIMARY KEY CHECK (id > 0),
    secret     bytea NOT NULL CHECK (length(secret) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE queue_token_keys;
