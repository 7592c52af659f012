-- An admin, or the operator, disables an account (issue 33): its keys and password
-- then open nothing. Kept on the account, not on each key, so that enabling it again
-- brings back the keys it had. Adding a column with a constant default rewrites no row.
-- The last-admin rule counts the enabled admins at each change of role or state: the
-- partial index holds them alone, so the count reads the admins, not every customer.

-- +goose Up
ALTER TABLE accounts ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1));
CREATE INDEX accounts_enabled_admins ON accounts (id) WHERE role = 'admin' AND disabled = 0;

-- +goose Down
DROP INDEX accounts_enabled_admins;
ALTER TABLE accounts DROP COLUMN disabled;
