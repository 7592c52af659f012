-- Events are written once; nothing per endpoint in the change's transaction (issue 20).
-- Each endpoint keeps its place in the feed (fan_cursor): the dispatcher's claims fan the
-- events after it out to the endpoint. A delivery has a row only while it is in
-- flight, pending a retry or failed, once it took more than one attempt, or for a
-- test event; one that succeeded at its first attempt leaves none, and the endpoint's
-- spans tell it: the ranges of the feed it was sent (span_from to fan_cursor now, and
-- earlier ranges in webhook_spans), each with the subscription it had then. A
-- delivery is named by its endpoint and its event's seq.

-- +goose Up
-- send_window bounds the deliveries of the endpoint in flight at once; failures halve
-- it and successes add one (up to the operator's --webhook-window).
ALTER TABLE webhooks ADD COLUMN fan_cursor INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN span_from INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN send_window INTEGER NOT NULL DEFAULT 32;
-- Endpoints were sent every event so far as rows, which stay: they start here.
UPDATE webhooks SET fan_cursor = (SELECT COALESCE(MAX(seq), 0) FROM events),
    span_from = (SELECT COALESCE(MAX(seq), 0) FROM events);

-- A past range of the feed (from_seq, to_seq] that the endpoint was sent with
-- subscription events_mask (failed_error NULL), or that was not sent because the
-- endpoint was disabled (failed_error says why: the deliveries in it failed).
CREATE TABLE webhook_spans (
    webhook_id   INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    from_seq     INTEGER NOT NULL,
    to_seq       INTEGER NOT NULL,
    events_mask  INTEGER NOT NULL,
    failed_error TEXT,
    PRIMARY KEY (webhook_id, from_seq)
) STRICT, WITHOUT ROWID;

-- fanned is 1 for a row the fan-out made: it is deleted when its first attempt
-- succeeds, its span remembering it.
CREATE TABLE deliveries_new (
    webhook_id      INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_seq       INTEGER NOT NULL REFERENCES events (seq) ON DELETE CASCADE,
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    last_attempt_at TEXT,
    response_status INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT    NOT NULL DEFAULT '',
    retry_since     TEXT    NOT NULL,
    leased_until    TEXT,
    created_at      TEXT    NOT NULL,
    fanned          INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (webhook_id, event_seq)
) STRICT;
INSERT INTO deliveries_new (webhook_id, event_seq, status, attempts, next_attempt_at, last_attempt_at,
    response_status, last_error, retry_since, leased_until, created_at)
SELECT webhook_id, event_seq, status, attempts, next_attempt_at, last_attempt_at, response_status,
    last_error, retry_since, leased_until, created_at FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_new RENAME TO deliveries;

-- The purge's cascade from events.
CREATE INDEX deliveries_event ON deliveries (event_seq);
-- Claims: an endpoint's due retries, and its deliveries in flight (leased).
CREATE INDEX deliveries_due ON deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_leased ON deliveries (webhook_id, leased_until) WHERE status = 'pending';

-- +goose Down
DROP TABLE webhook_spans;
CREATE TABLE deliveries_old (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id      INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_seq       INTEGER NOT NULL REFERENCES events (seq) ON DELETE CASCADE,
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    last_attempt_at TEXT,
    response_status INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT    NOT NULL DEFAULT '',
    retry_since     TEXT    NOT NULL,
    leased_until    TEXT,
    created_at      TEXT    NOT NULL,
    UNIQUE (webhook_id, event_seq)
) STRICT;
INSERT INTO deliveries_old (webhook_id, event_seq, status, attempts, next_attempt_at, last_attempt_at,
    response_status, last_error, retry_since, leased_until, created_at)
SELECT webhook_id, event_seq, status, attempts, next_attempt_at, last_attempt_at, response_status,
    last_error, retry_since, leased_until, created_at FROM deliveries ORDER BY event_seq;
DROP TABLE deliveries;
ALTER TABLE deliveries_old RENAME TO deliveries;
CREATE INDEX deliveries_event ON deliveries (event_seq);
CREATE INDEX deliveries_pending ON deliveries (webhook_id, id) WHERE status = 'pending';
ALTER TABLE webhooks DROP COLUMN send_window;
ALTER TABLE webhooks DROP COLUMN span_from;
ALTER TABLE webhooks DROP COLUMN fan_cursor;
