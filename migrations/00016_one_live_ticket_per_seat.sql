-- +goose Up
-- A seat may be sold again (its ticket refunded) and a ticket may move to
-- another buyer (a new ticket for the same seat, the old one revoked): a seat
-- has at most one live ticket, one that is not revoked, and any number of
-- revoked ones (owner: internal/scan).
ALTER TABLE tickets DROP CONSTRAINT tickets_seat_id_key;
CREATE UNIQUE INDEX tickets_one_live_per_seat ON tickets (seat_id) WHERE revoked_at IS NULL;
-- The seat's tickets, live or not (the foreign key's and a seat's history).
CREATE INDEX tickets_seat_id ON tickets (seat_id);

-- +goose Down
-- Refused while a seat has more than one ticket: the old constraint does not admit it.
DROP INDEX tickets_seat_id;
DROP INDEX tickets_one_live_per_seat;
ALTER TABLE tickets ADD CONSTRAINT tickets_seat_id_key UNIQUE (seat_id);
