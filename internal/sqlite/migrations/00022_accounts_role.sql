-- The console's staff and customers screens list the accounts of one role (GET
-- /accounts?role=, issue 33): the index of (role, id) reads a page of the few admins
-- without walking the customers, and a page of customers in id order from where the
-- cursor is, however many accounts there are.

-- +goose Up
CREATE INDEX accounts_role ON accounts (role, id);

-- +goose Down
DROP INDEX accounts_role;
