-- +goose Up
-- A short reference for every ticket (owner: internal/scan): 10 characters of
-- Crockford's base32 (0-9 and A-Z without I, L, O and U), 50 random bits,
-- printed under the ticket's QR code so that the door can type it when the
-- code cannot be scanned. New tickets get theirs from crypto/rand in Go
-- (scan.IssueTickets, scan.Transfer), retried on the rare collision with the
-- unique index; existing tickets get one here, from gen_random_uuid()'s random
-- bytes (bytes 0-5 and 9-12 of a version 4 UUID are random; each byte's low
-- 5 bits pick a character uniformly). A transferred ticket's new row gets a new
-- reference, as it gets a new code: the old reference admits no one, its
-- ticket being revoked.
ALTER TABLE tickets ADD COLUMN reference text;

-- +goose StatementBegin
CREATE FUNCTION pg_temp.ticket_reference() RETURNS text VOLATILE LANGUAGE sql AS $$
    SELECT string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', get_byte(r.b, x.i) % 32 + 1, 1), '' ORDER BY x.o)
    FROM (SELECT uuid_send(gen_random_uuid()) AS b) r,
         unnest(ARRAY[0, 1, 2, 3, 4, 5, 9, 10, 11, 12]) WITH ORDINALITY AS x (i, o)
$$;
-- +goose StatementEnd

UPDATE tickets SET reference = pg_temp.ticket_reference();

-- +goose StatementBegin
DO $$
BEGIN
    LOOP -- a collision among the backfilled: all but one of them draw again
        UPDATE tickets SET reference = pg_temp.ticket_reference()
        WHERE id IN (SELECT id FROM (
            SELECT id, row_number() OVER (PARTITION BY reference ORDER BY id) AS n FROM tickets) d WHERE d.n > 1);
        EXIT WHEN NOT FOUND;
    END LOOP;
END
$$;
-- +goose StatementEnd

ALTER TABLE tickets
    ALTER COLUMN reference SET NOT NULL,
    ADD CONSTRAINT tickets_reference_format CHECK (reference ~ '^[0-9A-HJKMNP-TV-Z]{10}$'),
    ADD CONSTRAINT tickets_reference_key UNIQUE (reference);

-- +goose Down
ALTER TABLE tickets DROP COLUMN reference;
