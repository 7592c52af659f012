-- An admin, or the operator, disables an account (issue 33): its keys and password
-- then open nothing. Kept on the account, not on each key, so that enabling it again
-- brings back the keys it had. Adding a column with a constant default rewrites no row.

-- +goose Up
ALTER TABLE accounts ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1));

-- +goose Down
ALTER TABLE accounts DROP COLUMN disabled;
