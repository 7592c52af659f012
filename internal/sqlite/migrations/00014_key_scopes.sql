-- API keys limited to scopes, with a lifetime and a last use. A key stored before has
-- every scope of its account's role (scopes NULL), no expiry and no known last use.

-- +goose Up
ALTER TABLE api_keys ADD COLUMN scopes TEXT;
ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN last_used_at;
ALTER TABLE api_keys DROP COLUMN expires_at;
ALTER TABLE api_keys DROP COLUMN scopes;
