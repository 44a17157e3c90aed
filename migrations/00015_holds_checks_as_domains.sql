-- +goose Up
-- The three CHECK constraints of holds become the domains of their columns,
-- with the same conditions. PostgreSQL reads a table's CHECK constraints
-- anew (from their stored text, then planned) at the start of every
-- statement that inserts or updates a row of it, and tests them all, whatever
-- columns it sets: the insert of a hold and its release each paid for the
-- three (about a twentieth of PostgreSQL's CPU on a hold and its release). A
-- domain's conditions are kept planned by each connection, and tested only on
-- a value converted to the domain, which is every value written to such a
-- column: an insert tests all three, a release only its status. What a hold
-- may hold is unchanged: 1 to 10 seats, a known status, a total that is not
-- negative.
CREATE DOMAIN hold_status AS text
    CHECK (VALUE IN ('active', 'checking_out', 'expired', 'released', 'converted'));
CREATE DOMAIN hold_seat_ids AS uuid[] CHECK (cardinality(VALUE) BETWEEN 1 AND 10);
CREATE DOMAIN hold_total_cents AS bigint CHECK (VALUE >= 0);

ALTER TABLE holds
    DROP CONSTRAINT holds_seat_ids_check,
    DROP CONSTRAINT holds_status_check,
    DROP CONSTRAINT holds_total_cents_check,
    ALTER COLUMN seat_ids TYPE hold_seat_ids,
    ALTER COLUMN status TYPE hold_status,
    ALTER COLUMN total_cents TYPE hold_total_cents;

-- +goose Down
ALTER TABLE holds
    ALTER COLUMN seat_ids TYPE uuid[],
    ALTER COLUMN status TYPE text,
    ALTER COLUMN total_cents TYPE bigint,
    ADD CONSTRAINT holds_seat_ids_check CHECK (cardinality(seat_ids) BETWEEN 1 AND 10),
    ADD CONSTRAINT holds_status_check
        CHECK (status IN ('active', 'checking_out', 'expired', 'released', 'converted')),
    ADD CONSTRAINT holds_total_cents_check CHECK (total_cents >= 0);
DROP DOMAIN hold_total_cents;
DROP DOMAIN hold_seat_ids;
DROP DOMAIN hold_status;
