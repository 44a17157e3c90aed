-- +goose Up
-- Refunds made at the payment provider reach Stagedoor (owner of both tables:
-- internal/checkout). A confirmed order whose charge was refunded at Payrail
-- becomes 'refunded', with its charge and the refund recorded; its tickets stay,
-- revoked (internal/scan), and its seats stay sold.
ALTER TABLE orders
    DROP CONSTRAINT orders_status_check,
    ADD CONSTRAINT orders_status_check
        CHECK (status IN ('pending', 'confirmed', 'declined', 'failed', 'released', 'refunded')),
    ADD CONSTRAINT orders_refunded_name_their_refund
        CHECK (status <> 'refunded' OR (charge_id IS NOT NULL AND refund_id IS NOT NULL));

-- How far reconciliation has read Payrail's refunds, in the order Payrail made
-- them (one row; none until the first pass).
CREATE TABLE refund_reconciliation (
    singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    refunded_through timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
-- Refused while any order is refunded: the old check does not admit it.
DROP TABLE refund_reconciliation;
ALTER TABLE orders
    DROP CONSTRAINT orders_refunded_name_their_refund,
    DROP CONSTRAINT orders_status_check,
    ADD CONSTRAINT orders_status_check
        CHECK (status IN ('pending', 'confirmed', 'declined', 'failed', 'released'));
