-- +goose Up
-- Emails are compared in NFC from now on (internal/text.Email): one stored in
-- another form (é typed as e and a combining accent) is stored in NFC, so that
-- its account still logs in. When two accounts' emails have one NFC form (the
-- look-alike accounts this closes), the oldest account gets it; the other keeps
-- its email as it is, and can no longer log in by it (docs/security.md).
UPDATE accounts a SET email = normalize(a.email, NFC)
FROM (
    SELECT DISTINCT ON (normalize(email, NFC)) id
    FROM accounts
    WHERE email IS NOT NFC NORMALIZED
    ORDER BY normalize(email, NFC), created_at, id
) oldest
WHERE a.id = oldest.id
  AND NOT EXISTS (SELECT FROM accounts b WHERE b.email = normalize(a.email, NFC));

-- +goose Down
-- Nothing to undo: an email in NFC is the same address.
SELECT 1;
