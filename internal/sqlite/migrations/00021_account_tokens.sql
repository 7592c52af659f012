-- One-time tokens of invitations and password resets (issue 33). Only the SHA-256 of
-- a token is kept (hash); a token is open until used or replaced (closed_at), and
-- works until expires_at. One open token per kind and address: a new invitation or
-- reset replaces the open one in place (an upsert on the partial unique index), so
-- the older link's hash is gone at once. email_lower is whom it is for: an address
-- that may have no account yet (an invitation), or an account's (a reset).
-- api_keys.session marks the keys of sessions, which a password reset revokes.

-- +goose Up
CREATE TABLE account_tokens (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind        TEXT    NOT NULL CHECK (kind IN ('invitation', 'reset')),
    hash        BLOB    NOT NULL UNIQUE,
    email       TEXT    NOT NULL,
    email_lower TEXT    NOT NULL,
    role        TEXT    NOT NULL CHECK (role IN ('customer', 'admin')),
    created_at  TEXT    NOT NULL,
    expires_at  TEXT    NOT NULL,
    closed_at   TEXT
) STRICT;
CREATE UNIQUE INDEX account_tokens_open ON account_tokens (kind, email_lower) WHERE closed_at IS NULL;
ALTER TABLE api_keys ADD COLUMN session INTEGER NOT NULL DEFAULT 0 CHECK (session IN (0, 1));

-- +goose Down
ALTER TABLE api_keys DROP COLUMN session;
DROP TABLE account_tokens;
