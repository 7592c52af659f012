-- API keys limited to scopes, with a lifetime and a last use. A key stored before has
-- every scope of its account's role (scopes NULL), no expiry and no known last use.

-- +goose Up
ALTER TABLE api_keys ADD COLUMN scopes text, ADD COLUMN expires_at timestamptz, ADD COLUMN last_used_at timestamptz;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN last_used_at, DROP COLUMN expires_at, DROP COLUMN scopes;
