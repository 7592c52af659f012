-- An account's keys are read through its live ones only (the cap's count, the list, a
-- revocation): an index of live keys keeps that work at most MaxKeysPerAccount rows,
-- however many keys the account made and revoked before.

-- +goose Up
CREATE INDEX api_keys_live ON api_keys (account_id, id) WHERE revoked_at IS NULL;
DROP INDEX api_keys_account;

-- +goose Down
CREATE INDEX api_keys_account ON api_keys (account_id, id);
DROP INDEX api_keys_live;
