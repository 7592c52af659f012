-- /readyz writes this one row: a database that cannot take a write (a full disk, a
-- read-only file) is not ready, even when it can still be read.

-- +goose Up
CREATE TABLE readiness (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    checked_at TEXT    NOT NULL
) STRICT;

-- +goose Down
DROP TABLE readiness;
