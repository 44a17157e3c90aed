-- +goose Up
-- The money after the sale: events change and are cancelled, tickets are
-- refunded through Payrail in part or whole, and a refunded seat goes back on
-- sale (docs/money.md, "Refunds").

-- Events (owner: internal/event). status: 'scheduled', or 'cancelled' once its
-- organizer cancelled it (cancelled_at). refunds_until: buyers may ask for a
-- refund before then; NULL, they cannot. description: free text, '' for none.
ALTER TABLE events
    ADD COLUMN status        text NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'cancelled')),
    ADD COLUMN cancelled_at  timestamptz,
    ADD COLUMN refunds_until timestamptz,
    ADD COLUMN description   text NOT NULL DEFAULT '',
    ADD COLUMN updated_at    timestamptz,
    ADD CONSTRAINT events_cancelled_at CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
    ADD CONSTRAINT events_refunds_until_by_start CHECK (refunds_until <= starts_at);

-- Tickets (owner: internal/scan). refund_status: 'pending' while a refund of
-- the ticket waits for Payrail's answer (it admits no one and cannot be
-- refunded again), 'refunded' once refunded (then revoked: its seat has no
-- live ticket). A ticket of a cancelled event may be refunded scanned. Tickets
-- of orders refunded at Payrail before are refunded.
ALTER TABLE tickets
    ADD COLUMN refund_status text CHECK (refund_status IN ('pending', 'refunded'));
UPDATE tickets t SET refund_status = 'refunded'
FROM orders o WHERE o.id = t.order_id AND o.status = 'refunded' AND t.revoked_at IS NOT NULL;
ALTER TABLE tickets
    ADD CONSTRAINT tickets_refund_status CHECK (
        refund_status IS NULL
        OR (refund_status = 'pending' AND revoked_at IS NULL)
        OR (refund_status = 'refunded' AND revoked_at IS NOT NULL));

-- Orders (owner: internal/checkout). refunded_cents: what the order's
-- succeeded refunds gave back. A confirmed order some of whose tickets (or
-- money) were given back is 'partially_refunded'; one given back whole is
-- 'refunded' (refunded_at: since when). refund_id keeps naming the refund of a
-- charge that reached Payrail for an order that was never confirmed.
ALTER TABLE orders
    ADD COLUMN refunded_cents bigint NOT NULL DEFAULT 0 CHECK (refunded_cents >= 0 AND refunded_cents <= total_cents),
    DROP CONSTRAINT orders_status_check,
    ADD CONSTRAINT orders_status_check CHECK (status IN
        ('pending', 'confirmed', 'partially_refunded', 'refunded', 'declined', 'failed', 'released')),
    DROP CONSTRAINT orders_refunded_name_their_refund,
    DROP CONSTRAINT orders_refund_is_whole,
    ADD CONSTRAINT orders_refund_recorded CHECK (refund_id IS NULL OR refunded_at IS NOT NULL),
    ADD CONSTRAINT orders_refunded_since CHECK (status <> 'refunded' OR (refunded_at IS NOT NULL AND charge_id IS NOT NULL)),
    ADD CONSTRAINT orders_refunded_cents_of_sales CHECK (refunded_cents = 0 OR status IN ('partially_refunded', 'refunded'));
UPDATE orders SET refunded_cents = total_cents WHERE status = 'refunded';
DROP INDEX orders_one_live_order_per_hold;
CREATE UNIQUE INDEX orders_one_live_order_per_hold ON orders (hold_id)
    WHERE status IN ('pending', 'confirmed', 'partially_refunded', 'refunded');

-- Refunds of orders (owner: internal/checkout). id is Payrail's Idempotency-Key
-- for the refund, so that a refund whose answer was lost is asked again and
-- made once. reason: who asked: the order's 'buyer', the event's 'organizer',
-- the 'cancellation' of its event, or 'payrail' (made at Payrail by someone
-- else, found by reconciliation). status: 'pending' until Payrail answers,
-- then 'succeeded' (payrail_refund_id names it; a refund of nothing needs no
-- Payrail) or 'failed' (Payrail refused it; nothing was refunded). A client's
-- Idempotency-Key (request_key, per requester) belongs to the refund it made.
-- lease_until: the request that made it is still at work on it. attempts:
-- how often it was sent to Payrail; next_attempt_at: not again before then.
CREATE TABLE refunds (
    id                uuid PRIMARY KEY,
    order_id          uuid NOT NULL REFERENCES orders (id),
    reason            text NOT NULL CHECK (reason IN ('buyer', 'organizer', 'cancellation', 'payrail')),
    ticket_ids        uuid[] NOT NULL,
    amount_cents      bigint NOT NULL CHECK (amount_cents >= 0),
    status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    payrail_refund_id text UNIQUE,
    requested_by      uuid REFERENCES accounts (id),
    request_key       text,
    request_hash      bytea,
    lease_until       timestamptz,
    attempts          integer NOT NULL DEFAULT 0,
    next_attempt_at   timestamptz,
    last_error        text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    settled_at        timestamptz,
    CHECK ((status = 'pending') = (settled_at IS NULL)),
    CHECK (status <> 'succeeded' OR payrail_refund_id IS NOT NULL OR amount_cents = 0),
    CHECK ((request_key IS NULL) = (request_hash IS NULL)),
    CHECK (request_key IS NULL OR requested_by IS NOT NULL)
);
CREATE UNIQUE INDEX refunds_request_key ON refunds (requested_by, request_key) WHERE request_key IS NOT NULL;
-- A cancelled event's order is refunded once by its cancellation.
CREATE UNIQUE INDEX refunds_one_cancellation_per_order ON refunds (order_id)
    WHERE reason = 'cancellation' AND status <> 'failed';
CREATE INDEX refunds_order_id ON refunds (order_id, created_at);
-- The refund pass's work list.
CREATE INDEX refunds_pending ON refunds (created_at) WHERE status = 'pending';
-- The orders refunded at Payrail before: one refund each, of the whole order.
INSERT INTO refunds (id, order_id, reason, ticket_ids, amount_cents, status, payrail_refund_id, created_at, settled_at)
SELECT gen_random_uuid(), o.id, 'payrail',
       coalesce((SELECT array_agg(t.id ORDER BY t.id) FROM tickets t WHERE t.order_id = o.id), '{}'),
       o.total_cents, 'succeeded', o.refund_id, o.refunded_at, o.refunded_at
FROM orders o WHERE o.status = 'refunded';
UPDATE orders SET refund_id = NULL WHERE status = 'refunded';

-- The cancellations of events (owner: internal/checkout), written in the
-- transaction that cancels the event: the refund job's work list. done_at:
-- when it found every order of the event refunded and none that could still
-- be confirmed.
CREATE TABLE event_cancellations (
    event_id     uuid PRIMARY KEY REFERENCES events (id),
    cancelled_at timestamptz NOT NULL DEFAULT now(),
    done_at      timestamptz
);

-- +goose Down
DROP TABLE event_cancellations;
UPDATE orders o SET refund_id = r.payrail_refund_id
FROM (SELECT DISTINCT ON (order_id) order_id, payrail_refund_id FROM refunds
      WHERE status = 'succeeded' AND payrail_refund_id IS NOT NULL ORDER BY order_id, settled_at DESC) r
WHERE r.order_id = o.id AND o.status = 'refunded';
DROP TABLE refunds;
DROP INDEX orders_one_live_order_per_hold;
CREATE UNIQUE INDEX orders_one_live_order_per_hold ON orders (hold_id) WHERE status IN ('pending', 'confirmed');
-- Refused while an order is partially refunded: the old check does not admit it.
ALTER TABLE orders
    DROP CONSTRAINT orders_refunded_cents_of_sales,
    DROP CONSTRAINT orders_refunded_since,
    DROP CONSTRAINT orders_refund_recorded,
    DROP CONSTRAINT orders_status_check,
    ADD CONSTRAINT orders_status_check
        CHECK (status IN ('pending', 'confirmed', 'declined', 'failed', 'released', 'refunded')),
    ADD CONSTRAINT orders_refund_is_whole CHECK ((refund_id IS NULL) = (refunded_at IS NULL)),
    ADD CONSTRAINT orders_refunded_name_their_refund
        CHECK (status <> 'refunded' OR (charge_id IS NOT NULL AND refund_id IS NOT NULL)),
    DROP COLUMN refunded_cents;
ALTER TABLE tickets DROP CONSTRAINT tickets_refund_status, DROP COLUMN refund_status;
ALTER TABLE events
    DROP CONSTRAINT events_refunds_until_by_start,
    DROP CONSTRAINT events_cancelled_at,
    DROP COLUMN updated_at,
    DROP COLUMN description,
    DROP COLUMN refunds_until,
    DROP COLUMN cancelled_at,
    DROP COLUMN status;
