-- Accounts by role (issue 33); the same as SQLite's migration 22, which says why.

-- +goose Up
CREATE INDEX accounts_role ON accounts (role, id);

-- +goose Down
DROP INDEX accounts_role;
