-- An Idempotency-Key now holds the result of its first request in the domain's terms,
-- the order as placed or the refusal, written in the transaction that places the
-- order (batched placement); the HTTP layer renders the first answer and every replay
-- from it. A key is never stored without its result, so the "claimed, unanswered"
-- state (status NULL) is gone.
--
-- Answered keys are carried over from the stored responses: a 201 body gives the
-- order, any other body the refusal. Unanswered claims belonged to requests that were
-- still running or died; they placed nothing and are dropped.

-- +goose Up
CREATE TABLE idempotency_results (
    account_id    INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key           TEXT    NOT NULL,
    request_hash  BLOB    NOT NULL,
    created_at    TEXT    NOT NULL,
    order_id      INTEGER,
    pet_id        INTEGER,
    quantity      INTEGER,
    ship_date     TEXT,
    error_code    TEXT,
    error_message TEXT,
    error_details TEXT,
    PRIMARY KEY (account_id, key),
    CHECK ((order_id IS NULL) <> (error_code IS NULL))
) STRICT, WITHOUT ROWID;

INSERT INTO idempotency_results
    (account_id, key, request_hash, created_at, order_id, pet_id, quantity, ship_date)
SELECT account_id, key, request_hash,
       COALESCE(strftime('%Y-%m-%dT%H:%M:%S.000000000Z', json_extract(body, '$.createdAt')), created_at),
       json_extract(body, '$.id'), json_extract(body, '$.petId'), json_extract(body, '$.quantity'),
       strftime('%Y-%m-%dT%H:%M:%S.000000000Z', json_extract(body, '$.shipDate'))
FROM idempotency_keys WHERE status = 201 AND json_valid(body) AND json_extract(body, '$.id') IS NOT NULL;

INSERT INTO idempotency_results
    (account_id, key, request_hash, created_at, error_code, error_message, error_details)
SELECT account_id, key, request_hash, created_at,
       json_extract(body, '$.code'), json_extract(body, '$.message'), json_extract(body, '$.details')
FROM idempotency_keys WHERE status <> 201 AND json_valid(body) AND json_extract(body, '$.code') IS NOT NULL;

DROP TABLE idempotency_keys;
ALTER TABLE idempotency_results RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
CREATE TABLE idempotency_keys (
    account_id   INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key          TEXT    NOT NULL,
    request_hash BLOB    NOT NULL,
    status       INTEGER,
    location     TEXT    NOT NULL DEFAULT '',
    body         BLOB,
    created_at   TEXT    NOT NULL,
    PRIMARY KEY (account_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
