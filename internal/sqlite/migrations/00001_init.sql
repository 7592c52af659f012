-- The first schema of the pet store. Times are RFC 3339 text in UTC with nine
-- fraction digits (see timeLayout in db.go), so they sort as text and round-trip
-- exactly. Ids use AUTOINCREMENT so that the id of a deleted row is never handed
-- out again: a completed order keeps the id of a pet that may since be gone.

-- +goose Up
CREATE TABLE accounts (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    email         TEXT    NOT NULL,
    email_lower   TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL DEFAULT '',
    role          TEXT    NOT NULL CHECK (role IN ('customer', 'admin')),
    created_at    TEXT    NOT NULL
) STRICT;

CREATE TABLE api_keys (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name       TEXT    NOT NULL,
    prefix     TEXT    NOT NULL,
    hash       BLOB    NOT NULL UNIQUE,
    created_at TEXT    NOT NULL,
    revoked_at TEXT
) STRICT;

CREATE INDEX api_keys_account ON api_keys (account_id, id);

CREATE TABLE messages (
    id         TEXT    PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    text       TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    created_at TEXT    NOT NULL
) STRICT;

CREATE TABLE categories (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL,
    name_lower  TEXT    NOT NULL UNIQUE,
    description TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE pets (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL,
    category_id INTEGER NOT NULL REFERENCES categories (id) ON DELETE RESTRICT,
    status      TEXT    NOT NULL CHECK (status IN ('available', 'pending', 'sold')),
    stock       INTEGER NOT NULL DEFAULT 0 CHECK (stock >= 0)
) STRICT;

CREATE INDEX pets_category ON pets (category_id, id);
CREATE INDEX pets_status ON pets (status, id);

-- pet_id has no foreign key: a completed order outlives its pet.
CREATE TABLE orders (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    pet_id     INTEGER NOT NULL,
    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    quantity   INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 100),
    ship_date  TEXT,
    complete   INTEGER NOT NULL DEFAULT 0 CHECK (complete IN (0, 1)),
    created_at TEXT    NOT NULL
) STRICT;

CREATE INDEX orders_pet_complete ON orders (pet_id, complete);
CREATE INDEX orders_account ON orders (account_id, id);

-- status is the HTTP status of the stored response; NULL while the claim is unanswered.
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

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE orders;
DROP TABLE pets;
DROP TABLE categories;
DROP TABLE messages;
DROP TABLE api_keys;
DROP TABLE accounts;
