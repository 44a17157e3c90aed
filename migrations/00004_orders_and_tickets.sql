-- +goose Up
-- Orders, tickets and idempotency keys (the "checkout" operations of docs/openapi.yaml).
--
-- An order is 'pending' from just before its charge until it is settled:
-- 'confirmed' (charged; its seats sold, its tickets issued), 'declined' (Payrail
-- declined; the hold is active again), 'failed' (Payrail certainly made no
-- charge; the hold is active again) or 'released' (found pending after a crash
-- with no charge at Payrail; its hold released). Payrail's idempotency key for
-- an order's charge is the order's id, so recovery can ask Payrail about it.
CREATE TABLE orders (
    id          uuid PRIMARY KEY,
    buyer_id    uuid NOT NULL REFERENCES accounts (id),
    hold_id     uuid NOT NULL REFERENCES holds (id),
    event_id    uuid NOT NULL,
    status      text NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'confirmed', 'declined', 'failed', 'released')),
    total_cents bigint NOT NULL CHECK (total_cents >= 0),
    currency    text NOT NULL,
    charge_id   text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    settled_at  timestamptz
);
-- A hold is checked out by at most one live order.
CREATE UNIQUE INDEX orders_one_live_order_per_hold ON orders (hold_id)
    WHERE status IN ('pending', 'confirmed');
CREATE INDEX orders_buyer_id ON orders (buyer_id, created_at DESC);
-- Recovery's work list.
CREATE INDEX orders_pending_created_at ON orders (created_at) WHERE status = 'pending';

-- A ticket admits one seat once. code is 128 random bits: unguessable.
CREATE TABLE tickets (
    id         uuid PRIMARY KEY,
    order_id   uuid NOT NULL REFERENCES orders (id),
    buyer_id   uuid NOT NULL REFERENCES accounts (id),
    event_id   uuid NOT NULL,
    seat_id    uuid NOT NULL UNIQUE REFERENCES seats (id),
    code       text NOT NULL UNIQUE,
    scanned_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tickets_buyer_id ON tickets (buyer_id, created_at);
CREATE INDEX tickets_order_id ON tickets (order_id);

-- The first response to a buyer's Idempotency-Key, replayed for 24 hours.
-- status_code is NULL while the first request is still running.
CREATE TABLE idempotency_keys (
    buyer_id     uuid NOT NULL REFERENCES accounts (id),
    key          text NOT NULL,
    request_hash bytea NOT NULL,
    status_code  integer,
    response     bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (buyer_id, key)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE tickets;
DROP TABLE orders;
