-- Where an account's password came from (issue 33); the same as SQLite's migration
-- 23, which says why.

-- +goose Up
ALTER TABLE accounts ADD COLUMN password_source text NOT NULL DEFAULT 'signup'
    CHECK (password_source IN ('signup', 'invitation'));

-- +goose Down
ALTER TABLE accounts DROP COLUMN password_source;
