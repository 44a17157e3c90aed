-- +goose Up
-- A limit_settings row without a bucket is a switch: a concurrency limit or a load
-- shedder (buyer-concurrency, fleet-usage, ...), of which an admin sets only the mode.
-- A bucket's three numbers are all there or all absent.
ALTER TABLE limit_settings
    ALTER COLUMN rate DROP NOT NULL,
    ALTER COLUMN period_ms DROP NOT NULL,
    ALTER COLUMN burst DROP NOT NULL,
    ADD CONSTRAINT limit_settings_bucket_whole
        CHECK ((rate IS NULL) = (period_ms IS NULL) AND (rate IS NULL) = (burst IS NULL));

-- +goose Down
DELETE FROM limit_settings WHERE rate IS NULL;
ALTER TABLE limit_settings
    DROP CONSTRAINT limit_settings_bucket_whole,
    ALTER COLUMN rate SET NOT NULL,
    ALTER COLUMN period_ms SET NOT NULL,
    ALTER COLUMN burst SET NOT NULL;
