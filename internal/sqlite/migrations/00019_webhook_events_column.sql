-- An endpoint's subscription, and a span's, is in a column named events, as on
-- PostgreSQL, so that both stores' statements name it alike. Renaming a column only
-- rewrites the schema (no row is read or written); no trigger or view names it.

-- +goose Up
ALTER TABLE webhooks RENAME COLUMN events_mask TO events;
ALTER TABLE webhook_spans RENAME COLUMN events_mask TO events;

-- +goose Down
ALTER TABLE webhook_spans RENAME COLUMN events TO events_mask;
ALTER TABLE webhooks RENAME COLUMN events TO events_mask;
