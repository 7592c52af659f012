-- An Idempotency-Key now holds the result of its first request in the domain's terms,
-- the order as placed or the refusal, written in the transaction that places the
-- order (batched placement); the HTTP layer renders the first answer and every replay
-- from it. A key is never stored without its result, so the "claimed, unanswered"
-- state (status NULL) is gone. As on SQLite (its migration 4).
--
-- Answered keys are carried over from the stored responses: a 201 body gives the
-- order, any other body the refusal. The bodies are the service's own JSON (it never
-- stored anything else there), so they are read as JSON without a guard. Unanswered claims belonged to requests that were
-- still running or died; they placed nothing and are dropped.

-- +goose Up
CREATE TABLE idempotency_results (
    account_id    bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key           text        NOT NULL,
    request_hash  bytea       NOT NULL,
    created_at    timestamptz NOT NULL,
    order_id      bigint,
    pet_id        bigint,
    quantity      integer,
    ship_date     timestamptz,
    error_code    text,
    error_message text,
    error_details text,
    CONSTRAINT idempotency_keys_key PRIMARY KEY (account_id, key),
    CHECK ((order_id IS NULL) <> (error_code IS NULL))
);

INSERT INTO idempotency_results
    (account_id, key, request_hash, created_at, order_id, pet_id, quantity, ship_date)
SELECT account_id, key, request_hash,
       COALESCE((b ->> 'createdAt')::timestamptz, created_at),
       (b ->> 'id')::bigint, (b ->> 'petId')::bigint, (b ->> 'quantity')::integer,
       (b ->> 'shipDate')::timestamptz
FROM (SELECT *, convert_from(body, 'UTF8')::jsonb AS b FROM idempotency_keys WHERE status = 201) k
WHERE b ->> 'id' IS NOT NULL;

INSERT INTO idempotency_results
    (account_id, key, request_hash, created_at, error_code, error_message, error_details)
SELECT account_id, key, request_hash, created_at, b ->> 'code', b ->> 'message', (b -> 'details')::text
FROM (SELECT *, convert_from(body, 'UTF8')::jsonb AS b FROM idempotency_keys WHERE status <> 201) k
WHERE b ->> 'code' IS NOT NULL;

DROP TABLE idempotency_keys;
ALTER TABLE idempotency_results RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
CREATE TABLE idempotency_keys (
    account_id   bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key          text        NOT NULL,
    request_hash bytea       NOT NULL,
    status       integer,
    location     text        NOT NULL DEFAULT '',
    body         bytea,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
