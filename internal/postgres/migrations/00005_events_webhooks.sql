-- Events and webhooks (issue 12): the outbox every change writes its events to, in
-- its own transaction; the endpoints that receive them; one delivery per event and
-- subscribed endpoint. Version 4 is the Go migration that re-keys emails.
--
-- An event's seq orders the feed. It is the writing transaction's id (xid8, which
-- never wraps) shifted left by 16 bits, plus the event's place in the transaction's
-- one INSERT (see events.go): the feed shows only events of transactions older than
-- every transaction still running (pg_snapshot_xmin), so a reader that follows the
-- cursor never misses an event that commits later with a smaller seq. A sequence
-- could not give that: its numbers are drawn before commit, in another order.
--
-- data is the resource of the event as petstore.MarshalEventData encodes it, kept as
-- text: nothing queries inside it, and text costs the order batches no parsing.

-- +goose Up
CREATE TABLE events (
    seq        bigint      PRIMARY KEY,
    id         text        NOT NULL UNIQUE,
    type       text        NOT NULL,
    created_at timestamptz NOT NULL,
    data       text        NOT NULL
);

CREATE INDEX events_type ON events (type, seq);
-- For the purge. Events are written about in the order of their dates, so a BRIN
-- index serves, at almost no cost to the writes.
CREATE INDEX events_created ON events USING brin (created_at);

-- events is a bit mask of petstore.EventTypes (petstore.EventMask).
CREATE TABLE webhooks (
    id                         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url                        text        NOT NULL,
    description                text        NOT NULL DEFAULT '',
    events                     bigint      NOT NULL,
    enabled                    boolean     NOT NULL,
    disabled_reason            text        NOT NULL DEFAULT '',
    secret                     text        NOT NULL,
    previous_secret            text        NOT NULL DEFAULT '',
    previous_secret_expires_at timestamptz,
    failing_since              timestamptz,
    created_at                 timestamptz NOT NULL,
    updated_at                 timestamptz NOT NULL
);

-- next_attempt_at is set while pending. leased_until is the end of the lease of the
-- process delivering it (ClaimDeliveries); a lease that ran out is free again.
-- retry_since starts the 72-hour retry horizon: the first attempt of the delivery's
-- current run (until then its creation, or a retry by hand).
--
-- No foreign keys: their checks, one query per row, doubled the cost of the deliveries
-- an order batch writes. The store deletes an endpoint's and an event's deliveries
-- itself. A delivery written by a batch that read an endpoint just deleted by another
-- transaction is left without one: claims start from the endpoints and never take it,
-- and the purge removes it with its event.
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

CREATE INDEX deliveries_webhook ON deliveries (webhook_id, id);
CREATE INDEX deliveries_event ON deliveries (event_seq);
-- Each endpoint's line of pending deliveries, in event order: a claim looks at the
-- head of each line only, so an endpoint with a long backlog costs it one probe.
CREATE INDEX deliveries_line ON deliveries (webhook_id, event_seq, id) WHERE status = 'pending';

-- +goose Down
DROP TABLE deliveries;
DROP TABLE webhooks;
DROP TABLE events;
