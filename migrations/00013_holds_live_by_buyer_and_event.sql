-- +goose Up
-- A placement counts the seats the buyer holds of the event now (internal/hold,
-- placeSQL's held): with only holds_buyer_id it read every hold the buyer ever
-- made, released and expired ones too, so that each hold cost more than the
-- last. The live ones alone, by buyer and event.
CREATE INDEX holds_live_by_buyer_and_event ON holds (buyer_id, event_id)
    WHERE status IN ('active', 'checking_out');

-- +goose Down
DROP INDEX holds_live_by_buyer_and_event;
