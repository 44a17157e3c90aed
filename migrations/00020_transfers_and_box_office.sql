-- +goose Up
-- Ticket transfers (owner: internal/scan). A transfer revokes the holder's
-- ticket (listed in ticket_revocations, so that doors refuse its code offline
-- too) and marks it transferred: to which account, when. The same transaction
-- issues a new ticket for the same seat and order to that account, with a new
-- id and code, naming the ticket it replaces in transferred_from. A ticket is
-- transferred once at most, and only a revoked one can be.
ALTER TABLE tickets
    ADD COLUMN transferred_at timestamptz,
    ADD COLUMN transferred_to uuid REFERENCES accounts (id),
    ADD COLUMN transferred_from uuid UNIQUE REFERENCES tickets (id),
    ADD CONSTRAINT tickets_transferred_whole CHECK ((transferred_at IS NULL) = (transferred_to IS NULL)),
    ADD CONSTRAINT tickets_transferred_are_revoked CHECK (transferred_at IS NULL OR revoked_at IS NOT NULL);

-- The organizer's box office: an event's orders newest first, a page at a time
-- (owner: internal/checkout), and its attendees, the tickets that admit
-- (owner: internal/scan).
CREATE INDEX orders_event_id_created_at ON orders (event_id, created_at, id);
CREATE INDEX tickets_event_id_live ON tickets (event_id) WHERE revoked_at IS NULL;

-- +goose Down
DROP INDEX tickets_event_id_live;
DROP INDEX orders_event_id_created_at;
ALTER TABLE tickets
    DROP CONSTRAINT tickets_transferred_are_revoked,
    DROP CONSTRAINT tickets_transferred_whole,
    DROP COLUMN transferred_from,
    DROP COLUMN transferred_to,
    DROP COLUMN transferred_at;
