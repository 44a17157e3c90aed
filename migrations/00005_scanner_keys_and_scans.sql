-- +goose Up
-- Scanner keys and the audit of every scan (the "scanning" operations of docs/openapi.yaml).
--
-- A scanner key is a door device's credential, made by an organizer and shown
-- once: only the SHA-256 of the key is stored (the key holds 256 random bits, so
-- a fast hash is right). event_id, when set, binds the key to one event of its
-- organizer. A revoked key keeps its row (the audit refers to it) and stops
-- working at once: every request looks its hash up here.
CREATE TABLE scanner_keys (
    id           uuid PRIMARY KEY,
    organizer_id uuid NOT NULL REFERENCES accounts (id),
    event_id     uuid REFERENCES events (id),
    label        text NOT NULL CHECK (btrim(label) <> ''),
    key_hash     bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz
);
CREATE INDEX scanner_keys_organizer_id ON scanner_keys (organizer_id, created_at);

-- Every scan attempt that reached the scan handler, refused ones included;
-- rows are only ever inserted. The scanned code itself is not kept: code_hash
-- is its SHA-256 (to find every attempt with one code) and code_prefix its first
-- characters (for a human). ticket_id is set when the code is a ticket of the
-- key's organizer. event_id is the event the attempt is listed under: the key's
-- event when the key is bound, else the ticket's event when ticket_id is set,
-- else NULL (an unknown code scanned with an unbound key belongs to no event).
CREATE TABLE scans (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scanner_key_id uuid NOT NULL REFERENCES scanner_keys (id),
    event_id       uuid,
    ticket_id      uuid,
    code_hash      bytea NOT NULL,
    code_prefix    text NOT NULL,
    result         text NOT NULL
                   CHECK (result IN ('admitted', 'already_scanned', 'invalid', 'wrong_event')),
    scanned_at     timestamptz NOT NULL DEFAULT now()
);
-- GET /v1/events/{id}/scans: newest first, paged by id.
CREATE INDEX scans_event_id ON scans (event_id, id DESC) WHERE event_id IS NOT NULL;

-- +goose Down
DROP TABLE scans;
DROP TABLE scanner_keys;
