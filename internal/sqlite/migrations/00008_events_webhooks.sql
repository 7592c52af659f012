-- Events, webhook endpoints and their deliveries (the outbox). Every change that makes
-- an event writes it here in its own transaction, with one pending delivery per enabled
-- endpoint subscribed to its type; the dispatcher sends deliveries from this table.

-- +goose Up
-- seq orders the feed; a single writer commits in seq order, so paging by seq misses
-- nothing. webhook_id is set only on a test event, which goes to that endpoint alone
-- and stays out of the feed. data is the resource as the event tells of it
-- (petstore.MarshalEventData).
CREATE TABLE events (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT    NOT NULL UNIQUE,
    type       TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    data       TEXT    NOT NULL,
    webhook_id INTEGER
) STRICT;

-- Event ids start with the time, so their unique index grows at its end. No other
-- index: every page an order's commit touches is one more page synced to the log.
-- created_at rises with seq, and the purge walks seq from the start; the feed filtered
-- by type walks seq too (an admin's cold path).

-- events_mask is petstore.EventMask: one bit per event type.
CREATE TABLE webhooks (
    id                         INTEGER PRIMARY KEY AUTOINCREMENT,
    url                        TEXT    NOT NULL,
    description                TEXT    NOT NULL DEFAULT '',
    events_mask                INTEGER NOT NULL,
    enabled                    INTEGER NOT NULL,
    disabled_reason            TEXT    NOT NULL DEFAULT '',
    secret                     TEXT    NOT NULL,
    previous_secret            TEXT    NOT NULL DEFAULT '',
    previous_secret_expires_at TEXT,
    failing_since              TEXT,
    created_at                 TEXT    NOT NULL,
    updated_at                 TEXT    NOT NULL
) STRICT;

-- retry_since starts the 72-hour retry horizon: the first attempt of the delivery's
-- current run (until then its creation, or an admin's retry); leased_until
-- is set while a dispatcher holds the delivery, so that a process killed mid-delivery
-- leaves it to be claimed again once the lease runs out.
CREATE TABLE deliveries (
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

CREATE INDEX deliveries_event ON deliveries (event_seq);
-- The queue: each endpoint's pending deliveries in order.
CREATE INDEX deliveries_pending ON deliveries (webhook_id, id) WHERE status = 'pending';

-- +goose Down
DROP TABLE deliveries;
DROP TABLE webhooks;
DROP TABLE events;
