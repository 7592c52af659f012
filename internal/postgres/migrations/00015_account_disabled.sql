-- A disabled account (issue 33); the same as SQLite's migration 20, which says why.

-- +goose Up
ALTER TABLE accounts ADD COLUMN disabled boolean NOT NULL DEFAULT false;
CREATE INDEX accounts_enabled_admins ON accounts (id) WHERE role = 'admin' AND NOT disabled;

-- +goose Down
DROP INDEX accounts_enabled_admins;
ALTER TABLE accounts DROP COLUMN disabled;
