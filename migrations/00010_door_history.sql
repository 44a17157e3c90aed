-- +goose Up
-- The door's history (internal/scan): one admission per ticket, uploads by a
-- revoked key, and room for the janitor to purge the audit's junk.
--
-- An earlier offline admission uploaded later used to leave the displaced
-- admission 'admitted' and insert a copy of it as a 'conflict' (sometimes of
-- the wrong row). Now the displaced row itself becomes the conflict: the
-- copies (the only conflict rows without a device scan id) go, and of each
-- ticket's admitted rows the one at the ticket's scanned_at stays admitted,
-- the others become conflicts. A unique index then keeps it so.
DELETE FROM scans WHERE result = 'conflict' AND device_scan_id IS NULL;
UPDATE scans s SET result = 'conflict'
FROM (
    SELECT a.id, row_number() OVER (
        PARTITION BY a.ticket_id ORDER BY a.scanned_at = t.scanned_at DESC, a.scanned_at, a.id) AS n
    FROM scans a JOIN tickets t ON t.id = a.ticket_id
    WHERE a.result = 'admitted'
) ranked
WHERE s.id = ranked.id AND ranked.n > 1;
CREATE UNIQUE INDEX scans_one_admission ON scans (ticket_id) WHERE result = 'admitted';

-- A scan uploaded by its key after the key was revoked (dated before the
-- revocation: the only ones heard).
ALTER TABLE scans ADD COLUMN uploaded_after_key_revoked boolean NOT NULL DEFAULT false;

-- An uploaded scan's date as its device gave it; scanned_at is the date
-- believed (the time it arrived when the device's was not to be believed).
-- Uploads before this one were believed as sent.
ALTER TABLE scans ADD COLUMN device_scanned_at timestamptz;
UPDATE scans SET device_scanned_at = scanned_at WHERE device_scan_id IS NOT NULL;

-- The newest scan a key uploaded whose date was believed: an upload's dates
-- are believed from there on.
CREATE INDEX scans_uploaded_by_key ON scans (scanner_key_id, scanned_at)
    WHERE device_scan_id IS NOT NULL AND scanned_at = device_scanned_at;

-- The janitor's: scans of codes that named no ticket, oldest first.
CREATE INDEX scans_no_ticket ON scans (received_at) WHERE ticket_id IS NULL;

-- +goose Down
DROP INDEX scans_no_ticket;
DROP INDEX scans_uploaded_by_key;
ALTER TABLE scans DROP COLUMN device_scanned_at;
ALTER TABLE scans DROP COLUMN uploaded_after_key_revoked;
DROP INDEX scans_one_admission;
