-- Events are written once; nothing per endpoint in the change's transaction (issue 20).
-- Each endpoint keeps its place in the feed (fan_cursor): the dispatcher's claims fan
-- the events after it out to the endpoint, up to the feed's visible end. A delivery
-- has a row only while it is in flight, pending a retry or failed, once it took more
-- than one attempt, or for a test event; one that succeeded at its first attempt
-- leaves none, and the endpoint's spans tell it: the ranges of the feed it was sent
-- (span_from to fan_cursor now, and earlier ranges in webhook_spans), each with the
-- subscription it had then. A delivery is named by its endpoint and its event's seq.

-- +goose Up
-- send_window bounds the endpoint's deliveries in flight at once; failures halve it
-- and successes add one (up to the operator's --webhook-window).
ALTER TABLE webhooks ADD COLUMN fan_cursor bigint NOT NULL DEFAULT 0,
    ADD COLUMN span_from bigint NOT NULL DEFAULT 0,
    ADD COLUMN send_window integer NOT NULL DEFAULT 32;
-- Endpoints were sent every event so far as rows, which stay: they start here.
UPDATE webhooks SET fan_cursor = (SELECT coalesce(max(seq), 0) FROM events),
    span_from = (SELECT coalesce(max(seq), 0) FROM events);

-- A past range of the feed (from_seq, to_seq] that the endpoint was sent with
-- subscription events (failed_error NULL), or that was not sent because the endpoint
-- was disabled (failed_error says why: its deliveries failed).
CREATE TABLE webhook_spans (
    webhook_id   bigint NOT NULL,
    from_seq     bigint NOT NULL,
    to_seq       bigint NOT NULL,
    events       bigint NOT NULL,
    failed_error text,
    PRIMARY KEY (webhook_id, from_seq)
);

-- fanned is true for a row the fan-out made: it is deleted when its first attempt
-- succeeds, its span remembering it. No foreign keys, as before: the store deletes an
-- endpoint's and an event's deliveries itself.
CREATE TABLE deliveries_new (
    webhook_id      bigint      NOT NULL,
    event_seq       bigint      NOT NULL,
    status          text        NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    leased_until    timestamptz,
    last_attempt_at timestamptz,
    response_status integer     NOT NULL DEFAULT 0,
    last_error      text        NOT NULL DEFAULT '',
    retry_since     timestamptz NOT NULL,
    created_at      timestamptz NOT NULL,
    fanned          boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (webhook_id, event_seq),
    CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
INSERT INTO deliveries_new (webhook_id, event_seq, status, attempts, next_attempt_at, leased_until,
    last_attempt_at, response_status, last_error, retry_since, created_at)
SELECT webhook_id, event_seq, status, attempts, next_attempt_at, leased_until, last_attempt_at,
    response_status, last_error, retry_since, created_at FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_new RENAME TO deliveries;
-- The purge's deletion by event.
CREATE INDEX deliveries_event ON deliveries (event_seq);
-- Claims: an endpoint's due retries, and its deliveries in flight (leased).
CREATE INDEX deliveries_due ON deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_leased ON deliveries (webhook_id, leased_until) WHERE status = 'pending';

-- +goose Down
DROP TABLE webhook_spans;
ALTER TABLE deliveries RENAME TO deliveries_fanout;
CREATE TABLE deliveries (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id      bigint      NOT NULL,
    event_seq       bigint      NOT NULL,
    status          text        NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    leased_until    timestamptz,
    last_attempt_at timestamptz,
    response_status integer     NOT NULL DEFAULT 0,
    last_error      text        NOT NULL DEFAULT '',
    retry_since     timestamptz NOT NULL,
    created_at      timestamptz NOT NULL,
    CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
INSERT INTO deliveries (webhook_id, event_seq, status, attempts, next_attempt_at, leased_until,
    last_attempt_at, response_status, last_error, retry_since, created_at)
SELECT webhook_id, event_seq, status, attempts, next_attempt_at, leased_until, last_attempt_at,
    response_status, last_error, retry_since, created_at FROM deliveries_fanout ORDER BY event_seq;
DROP TABLE deliveries_fanout;
CREATE INDEX deliveries_webhook ON deliveries (webhook_id, id);
CREATE INDEX deliveries_event ON deliveries (event_seq);
CREATE INDEX deliveries_line ON deliveries (webhook_id, event_seq, id) WHERE status = 'pending';
ALTER TABLE webhooks DROP COLUMN send_window, DROP COLUMN span_from, DROP COLUMN fan_cursor;
