-- +goose Up
-- General admission (issue 28). A section is either seated (rows × seats_per_row
-- seats, as before) or of general admission: `capacity` places, which are rows of
-- seats like any seat (owner: internal/hold) with row_label '' and numbers 1 to
-- capacity, made with the event. Everything after a hold (checkout, tickets, the
-- door) treats a place as a seat; the seat map lists only seats (row_label <> '').
--
-- Sections get ids, so that a hold names a general-admission section by id
-- (owner: internal/event). Existing sections are seated: their capacity is
-- rows × seats_per_row, which every section now states.
ALTER TABLE event_sections
    ADD COLUMN id uuid,
    ADD COLUMN general_admission boolean NOT NULL DEFAULT false,
    ADD COLUMN capacity integer;
UPDATE event_sections SET id = gen_random_uuid(), capacity = rows * seats_per_row;
ALTER TABLE event_sections
    ALTER COLUMN id SET NOT NULL,
    ALTER COLUMN capacity SET NOT NULL,
    ALTER COLUMN rows DROP NOT NULL,
    ALTER COLUMN seats_per_row DROP NOT NULL,
    ADD CONSTRAINT event_sections_id_key UNIQUE (id),
    ADD CONSTRAINT event_sections_capacity_check CHECK (capacity > 0),
    -- A seated section has rows and seats per row, and as many seats as they
    -- make; a general-admission section has neither, only its capacity.
    ADD CONSTRAINT event_sections_kind_check CHECK (
        CASE WHEN general_admission THEN rows IS NULL AND seats_per_row IS NULL
             ELSE rows IS NOT NULL AND seats_per_row IS NOT NULL AND capacity = rows * seats_per_row END);

-- A general-admission hold takes the free places of a section from a random
-- number on, in number order, skipping the rows other placements have locked
-- (FOR NO KEY UPDATE SKIP LOCKED): this index finds them. It names none of the
-- columns a hold changes (hold_id, held_until, sold_at), so taking a place stays
-- a HOT update, as taking a seat is.
CREATE INDEX seats_places ON seats (event_id, section, number) WHERE row_label = '';

-- +goose Down
DROP INDEX seats_places;
-- Refused while an event has a general-admission section: its places would
-- pass for seats.
ALTER TABLE event_sections
    DROP CONSTRAINT event_sections_kind_check,
    DROP CONSTRAINT event_sections_capacity_check,
    DROP CONSTRAINT event_sections_id_key,
    ALTER COLUMN rows SET NOT NULL,
    ALTER COLUMN seats_per_row SET NOT NULL,
    DROP COLUMN capacity,
    DROP COLUMN general_admission,
    DROP COLUMN id;
