-- +goose Up
-- The money path tells the truth: an Idempotency-Key belongs to the order it
-- wrote; a checkout holds a lease on its order while it works; recovery knows
-- the charge's window; a late charge on a released order is refunded and
-- recorded. Owner of every table here: internal/checkout.

-- charge_deadline: the order's charge request is never outstanding past it, on
-- the database's clock (recovery asks Payrail whether its ledger covers up to
-- then). lease_until: the checkout that wrote the order works on it until then;
-- recovery leaves a pending order alone while the lease runs, and a dead
-- instance's lease lapses by itself. refund_id, refunded_at: a charge that
-- reached Payrail for an order that was not confirmed, refunded by
-- reconciliation (charge_id then names that charge).
ALTER TABLE orders
    ADD COLUMN charge_deadline timestamptz,
    ADD COLUMN lease_until     timestamptz,
    ADD COLUMN refund_id       text UNIQUE,
    ADD COLUMN refunded_at     timestamptz;
UPDATE orders SET charge_deadline = created_at + interval '5 seconds';
ALTER TABLE orders
    ALTER COLUMN charge_deadline SET NOT NULL,
    ADD CONSTRAINT orders_confirmed_are_charged CHECK (status <> 'confirmed' OR charge_id IS NOT NULL),
    ADD CONSTRAINT orders_refund_is_whole CHECK ((refund_id IS NULL) = (refunded_at IS NULL)),
    ADD CONSTRAINT orders_confirmed_are_not_refunded CHECK (status <> 'confirmed' OR refund_id IS NULL);

-- An Idempotency-Key belongs, for 24 hours, to the order its first request wrote
-- (order_id), and a retry answers that order's current state. While a request
-- works on the key, claim names that request and lease_until says until when; a
-- claim whose lease lapsed (its instance died) may be taken over. A key whose
-- request wrote nothing is deleted. The stored responses of migration 00004 are
-- replaced by the orders they answered with.
ALTER TABLE idempotency_keys
    ADD COLUMN order_id    uuid REFERENCES orders (id),
    ADD COLUMN claim       uuid,
    ADD COLUMN lease_until timestamptz;
UPDATE idempotency_keys
SET order_id = (convert_from(response, 'UTF8')::jsonb ->> 'id')::uuid
WHERE status_code = 201;
DELETE FROM idempotency_keys WHERE order_id IS NULL;
ALTER TABLE idempotency_keys
    DROP COLUMN status_code,
    DROP COLUMN response,
    ADD CONSTRAINT idempotency_keys_claimed_with_lease CHECK ((claim IS NULL) = (lease_until IS NULL));
CREATE INDEX idempotency_keys_order_id ON idempotency_keys (order_id);

-- How far reconciliation has read Payrail's charges, in the order Payrail
-- recorded them (one row; none until the first pass).
CREATE TABLE payment_reconciliation (
    singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    recorded_through timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE payment_reconciliation;
DROP INDEX idempotency_keys_order_id;
ALTER TABLE idempotency_keys
    DROP CONSTRAINT idempotency_keys_claimed_with_lease,
    ADD COLUMN status_code integer,
    ADD COLUMN response bytea;
DELETE FROM idempotency_keys;
ALTER TABLE idempotency_keys
    DROP COLUMN order_id,
    DROP COLUMN claim,
    DROP COLUMN lease_until;
ALTER TABLE orders
    DROP CONSTRAINT orders_confirmed_are_charged,
    DROP CONSTRAINT orders_refund_is_whole,
    DROP CONSTRAINT orders_confirmed_are_not_refunded,
    DROP COLUMN charge_deadline,
    DROP COLUMN lease_until,
    DROP COLUMN refund_id,
    DROP COLUMN refunded_at;
