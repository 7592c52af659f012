-- Before ship dates were bounded (2000–2099), a date such as 9999-12-31T23:59:59-23:59
-- was stored as year 10000, which RFC 3339 cannot express: the API answered it with a
-- five-digit year that clients cannot read. Such dates are dropped; the orders keep
-- everything else. As on SQLite (its migration 5).

-- +goose Up
UPDATE orders SET ship_date = NULL WHERE ship_date >= '10000-01-01T00:00:00Z';
UPDATE idempotency_keys SET ship_date = NULL WHERE ship_date >= '10000-01-01T00:00:00Z';

-- +goose Down
SELECT 1;
