-- +goose Up
-- The outbox of e-mail (owner: internal/mail). A notice (an order confirmed, a
-- refund, a transfer, a cancelled event) is written here in the transaction of
-- what it announces, one row per recipient, and sent afterwards by the sending
-- loop of one instance at a time, in order (id), with retries.
CREATE TABLE mail_outbox (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- The Message-ID's left part: the same on every try, so that a message
    -- sent twice (a crash between the server's 250 and marking it sent) is
    -- one message to the reader's mail client.
    message_id      uuid NOT NULL UNIQUE,
    kind            text NOT NULL CHECK (kind <> ''),
    recipient       text NOT NULL, -- the address; one the sender cannot use is given up
    notice          jsonb NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- Not tried before then (the backoff after a failure).
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    -- A sender's claim: no other sender takes the row before then.
    claimed_until   timestamptz,
    attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error      text,
    sent_at         timestamptz,
    -- Refused for good (the server said 5xx to it, or it cannot be written).
    gave_up_at      timestamptz,
    CHECK (sent_at IS NULL OR gave_up_at IS NULL)
);
-- What is left to send, in order.
CREATE INDEX mail_outbox_unsent ON mail_outbox (id) WHERE sent_at IS NULL AND gave_up_at IS NULL;
-- What the janitor purges.
CREATE INDEX mail_outbox_sent ON mail_outbox (sent_at) WHERE sent_at IS NOT NULL;
CREATE INDEX mail_outbox_gave_up ON mail_outbox (gave_up_at) WHERE gave_up_at IS NOT NULL;
-- A recipient's messages (tests and operators: "was it sent?").
CREATE INDEX mail_outbox_recipient ON mail_outbox (recipient, id);

-- +goose Down
DROP TABLE mail_outbox;
