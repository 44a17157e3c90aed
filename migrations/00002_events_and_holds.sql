-- +goose Up
-- Events, their sections and seats, and holds (the "events" and "holds"
-- operations of docs/openapi.yaml). An event, its sections and its seats never change once created.
CREATE TABLE events (
    id               uuid PRIMARY KEY,
    organizer_id     uuid NOT NULL REFERENCES accounts (id),
    name             text NOT NULL CHECK (btrim(name) <> ''),
    venue            text NOT NULL CHECK (btrim(venue) <> ''),
    starts_at        timestamptz NOT NULL,
    on_sale_at       timestamptz NOT NULL CHECK (on_sale_at <= starts_at),
    currency         text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    -- The waiting room's admission rate; NULL when the event has none.
    admit_per_second integer CHECK (admit_per_second > 0),
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_organizer_id ON events (organizer_id);
CREATE INDEX events_starts_at ON events (starts_at, id);

CREATE TABLE event_sections (
    event_id      uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    position      integer NOT NULL,
    name          text NOT NULL CHECK (btrim(name) <> ''),
    rows          integer NOT NULL CHECK (rows > 0),
    seats_per_row integer NOT NULL CHECK (seats_per_row > 0),
    price_cents   bigint NOT NULL CHECK (price_cents >= 0),
    PRIMARY KEY (event_id, position),
    UNIQUE (event_id, name)
);

-- A seat is held while held_until is in the future and sold once sold_at is
-- set. It is takeable, by one conditional UPDATE, when
--
--     sold_at IS NULL AND (held_until IS NULL OR held_until <= now())
--
-- so an expired hold's seats are available at once, whether or not the sweeper
-- has marked the hold expired yet. hold_id is the hold that took the seat last;
-- it is not cleared at expiry (the next hold overwrites it).
--
-- Only hold_id, held_until and sold_at ever change, and none is indexed, so
-- taking a seat is a HOT update (no index is touched); fillfactor leaves the
-- room on each page for it. Statements that reach a hold's seats find them by
-- id = ANY(holds.seat_ids), never by an index on hold_id.
--
-- Checkout (a later migration adds orders and tickets) needs no other column:
--   * keep the seats past the hold's expiry while the payment runs, in one
--     conditional UPDATE that succeeds only if the hold still owns every seat:
--         UPDATE seats SET held_until = 'infinity'
--         WHERE id = ANY($seat_ids) AND hold_id = $hold AND held_until > now()
--           AND sold_at IS NULL
--     (all rows updated, or roll back: hold-not-active), with the hold's status
--     set from 'active' to 'checking_out', which the sweeper leaves alone;
--   * sell them: UPDATE seats SET sold_at = now() WHERE id = ANY($seat_ids)
--     AND hold_id = $hold, and the hold becomes 'converted';
--   * a declined payment puts held_until back to the hold's expires_at and the
--     hold back to 'active'.
-- Every statement that locks several seats locks them in id order (SELECT ...
-- ORDER BY id FOR NO KEY UPDATE), as placing a hold does, so two of them never
-- deadlock.
CREATE TABLE seats (
    id          uuid PRIMARY KEY,
    event_id    uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    position    integer NOT NULL, -- the seat's place on the seat map
    section     text NOT NULL,
    row_label   text NOT NULL,
    number      integer NOT NULL CHECK (number > 0),
    price_cents bigint NOT NULL CHECK (price_cents >= 0),
    hold_id     uuid,
    held_until  timestamptz,
    sold_at     timestamptz,
    UNIQUE (event_id, position)
) WITH (fillfactor = 80);

-- A hold owns its seats through seats.hold_id and seats.held_until; seat_ids
-- keeps the seats it asked for, for reading it back after its seats moved on.
-- status: 'active' (until expires_at), 'checking_out' (checkout running; shown
-- as active), 'expired' (set by the sweeper), 'released', 'converted'.
-- event_id has no foreign key on purpose: every hold on a hot event would take a
-- KEY SHARE lock on that one event row. The seats of the hold prove the event.
CREATE TABLE holds (
    id          uuid PRIMARY KEY,
    event_id    uuid NOT NULL,
    buyer_id    uuid NOT NULL REFERENCES accounts (id),
    seat_ids    uuid[] NOT NULL CHECK (cardinality(seat_ids) BETWEEN 1 AND 10),
    status      text NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'checking_out', 'expired', 'released', 'converted')),
    total_cents bigint NOT NULL CHECK (total_cents >= 0),
    currency    text NOT NULL,
    expires_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    ended_at    timestamptz
);
CREATE INDEX holds_buyer_id ON holds (buyer_id);
-- The sweeper's work list.
CREATE INDEX holds_active_expires_at ON holds (expires_at) WHERE status = 'active';

-- +goose Down
DROP TABLE holds;
DROP TABLE seats;
DROP TABLE event_sections;
DROP TABLE events;
