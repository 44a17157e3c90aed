-- +goose Up
-- An event's optional image (owner: internal/event): uploaded by its organizer
-- as JPEG, PNG or WebP, stored re-encoded (JPEG or PNG, no metadata), at most
-- 1600 px wide. etag is a hash of data, as HTTP's ETag header sends it.
CREATE TABLE event_images (
    event_id     uuid PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
    content_type text NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png')),
    data         bytea NOT NULL CHECK (octet_length(data) > 0),
    width        integer NOT NULL CHECK (width BETWEEN 1 AND 1600),
    height       integer NOT NULL CHECK (height BETWEEN 1 AND 10000),
    etag         text NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE event_images;
