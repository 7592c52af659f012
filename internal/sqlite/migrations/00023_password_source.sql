-- Where an account's password came from (issue 33): signup, chosen by whoever signed
-- up with the address, or invitation, set through an invitation's one-time link,
-- which an admin or the operator made for that address. An admin never makes a
-- sign-up admin (a stranger may have pre-empted the address), but makes an invited
-- account admin again after making it a customer. A password reset keeps it; taking
-- an account over sets it back to signup (it has no password then, which reads as
-- none). Existing passwords count as sign-ups.

-- +goose Up
ALTER TABLE accounts ADD COLUMN password_source TEXT NOT NULL DEFAULT 'signup'
    CHECK (password_source IN ('signup', 'invitation'));

-- +goose Down
ALTER TABLE accounts DROP COLUMN password_source;
