-- A disabled account (issue 33); the same as SQLite's migration 20, which says why.

-- +goose Up
ALTER TABLE accounts ADD COLUMN disabled boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE accounts DROP COLUMN disabled;
