-- +goose Up
-- The door works offline (internal/ticketsign, internal/scan).
--
-- ticket_keys (owner: internal/ticketsign): one Ed25519 key pair per event,
-- made when its first ticket is issued; tickets issued since carry codes signed
-- by it, which a scanner holding the public key checks without the server. The
-- private key is kept as its 32-byte seed, and never leaves the server.
CREATE TABLE ticket_keys (
    event_id    uuid PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
    public_key  bytea NOT NULL CHECK (length(public_key) = 32),
    private_key bytea NOT NULL CHECK (length(private_key) = 32),
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- Revoked tickets (owner: internal/scan): a revoked ticket admits no one, and
-- scanners learn of it offline from the revocations list, in id order.
ALTER TABLE tickets ADD COLUMN revoked_at timestamptz;
CREATE TABLE ticket_revocations (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ticket_id  uuid NOT NULL UNIQUE REFERENCES tickets (id),
    event_id   uuid NOT NULL,
    revoked_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ticket_revocations_event_id ON ticket_revocations (event_id, id);

-- Scans a device made offline and uploaded later: device_scan_id makes an upload
-- idempotent per key (a retried batch changes nothing), offline marks them, and
-- scanned_at is then the device's time. A ticket admitted offline on two
-- devices keeps the earliest admission; the other is recorded as a conflict.
ALTER TABLE scans
    ADD COLUMN device_scan_id text CHECK (length(device_scan_id) BETWEEN 1 AND 100),
    ADD COLUMN offline boolean NOT NULL DEFAULT false,
    ADD COLUMN received_at timestamptz NOT NULL DEFAULT now(),
    DROP CONSTRAINT scans_result_check,
    ADD CONSTRAINT scans_result_check
        CHECK (result IN ('admitted', 'already_scanned', 'invalid', 'wrong_event', 'revoked', 'conflict'));
CREATE UNIQUE INDEX scans_device_scan_id ON scans (scanner_key_id, device_scan_id) WHERE device_scan_id IS NOT NULL;

-- +goose Down
DROP INDEX scans_device_scan_id;
DELETE FROM scans WHERE result IN ('revoked', 'conflict');
ALTER TABLE scans
    DROP CONSTRAINT scans_result_check,
    ADD CONSTRAINT scans_result_check CHECK (result IN ('admitted', 'already_scanned', 'invalid', 'wrong_event')),
    DROP COLUMN received_at,
    DROP COLUMN offline,
    DROP COLUMN device_scan_id;
DROP TABLE ticket_revocations;
ALTER TABLE tickets DROP COLUMN revoked_at;
DROP TABLE ticket_keys;
