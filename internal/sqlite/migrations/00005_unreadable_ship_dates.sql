-- Before ship dates were bounded (2000–2099), a date such as 9999-12-31T23:59:59-23:59
-- was stored as year 10000, which no RFC 3339 reader, this service included, can read:
-- the order could no longer be read, listed, completed or cancelled, and listing every
-- order failed with it. Such dates are dropped; the orders keep everything else.
-- Stored times are 30 characters long with a four-digit year (timeLayout in db.go).

-- +goose Up
UPDATE orders SET ship_date = NULL WHERE ship_date IS NOT NULL AND length(ship_date) <> 30;
UPDATE idempotency_keys SET ship_date = NULL WHERE ship_date IS NOT NULL AND length(ship_date) <> 30;

-- +goose Down
SELECT 1;
