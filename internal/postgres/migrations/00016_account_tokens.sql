-- One-time tokens of invitations and password resets (issue 33); the same as SQLite's
-- migration 21, which says why.

-- +goose Up
CREATE TABLE account_tokens (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind        text        NOT NULL CHECK (kind IN ('invitation', 'reset')),
    hash        bytea       NOT NULL UNIQUE,
    email       text        NOT NULL,
    email_lower text        NOT NULL,
    role        text        NOT NULL CHECK (role IN ('customer', 'admin')),
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    closed_at   timestamptz
);
CREATE UNIQUE INDEX account_tokens_open ON account_tokens (kind, email_lower) WHERE closed_at IS NULL;
ALTER TABLE api_keys ADD COLUMN session boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN session;
DROP TABLE account_tokens;
