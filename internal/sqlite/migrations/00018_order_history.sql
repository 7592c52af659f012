-- Prices, an order's whole life, archived pets and the sales summary (issue 31).
--
-- A pet gets a price (NULL: not for sale) and the count of orders it ever had, kept
-- on the pet in the transaction of every order as open_orders is: a pet that had any
-- is archived when deleted (archived_pets, out of every catalogue read), one without
-- is erased.
--
-- An order keeps its status, the times it completed or was cancelled, and what it was
-- placed with: the unit price, the pet's name and category. A cancelled order stays.
-- Orders placed before get the name and category their pet has now, when it still
-- exists, no price, and the time of their completion from the feed while it holds it.
--
-- Lists of orders go newest first by (created_at, id); an index leads with each
-- filter (account, status) and serves the range of created_at and the order.
--
-- sales_daily keeps the figures of the sales report per day, pet and category,
-- changed with every order placed and cancelled, so that a report reads its days'
-- rows, not every order. settings keeps the shop's currency.

-- +goose Up
ALTER TABLE pets ADD COLUMN price INTEGER CHECK (price BETWEEN 0 AND 100000000);
ALTER TABLE pets ADD COLUMN orders INTEGER NOT NULL DEFAULT 0 CHECK (orders >= 0);
UPDATE pets SET orders = o.n
  FROM (SELECT pet_id, count(*) AS n FROM orders GROUP BY pet_id) AS o
 WHERE pets.id = o.pet_id;

CREATE TABLE archived_pets (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    category_id INTEGER NOT NULL,
    price       INTEGER,
    archived_at TEXT    NOT NULL
) STRICT;

ALTER TABLE orders ADD COLUMN status TEXT NOT NULL DEFAULT 'placed'
    CHECK (status IN ('placed', 'completed', 'cancelled'));
ALTER TABLE orders ADD COLUMN completed_at TEXT;
ALTER TABLE orders ADD COLUMN cancelled_at TEXT;
ALTER TABLE orders ADD COLUMN unit_price INTEGER;
ALTER TABLE orders ADD COLUMN pet_name TEXT;
ALTER TABLE orders ADD COLUMN category_id INTEGER NOT NULL DEFAULT 0;
UPDATE orders SET status = 'completed' WHERE complete = 1;
UPDATE orders SET pet_name = p.name, category_id = p.category_id
  FROM pets AS p
 WHERE p.id = orders.pet_id;
UPDATE orders SET completed_at = c.at
  FROM (SELECT json_extract(data, '$.order.id') AS order_id, min(created_at) AS at
          FROM events WHERE type = 'order.completed' GROUP BY 1) AS c
 WHERE orders.id = c.order_id AND orders.complete = 1;

DROP INDEX orders_account;
CREATE INDEX orders_account_created ON orders (account_id, created_at, id);
CREATE INDEX orders_created ON orders (created_at, id);
CREATE INDEX orders_status_created ON orders (status, created_at, id);

CREATE TABLE sales_daily (
    day               TEXT    NOT NULL,
    pet_id            INTEGER NOT NULL,
    category_id       INTEGER NOT NULL,
    orders            INTEGER NOT NULL DEFAULT 0,
    units             INTEGER NOT NULL DEFAULT 0,
    revenue           INTEGER NOT NULL DEFAULT 0,
    cancelled_orders  INTEGER NOT NULL DEFAULT 0,
    cancelled_units   INTEGER NOT NULL DEFAULT 0,
    cancelled_revenue INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, pet_id, category_id)
) STRICT, WITHOUT ROWID;
INSERT INTO sales_daily (day, pet_id, category_id, orders, units)
SELECT substr(created_at, 1, 10), pet_id, category_id, count(*), sum(quantity)
  FROM orders GROUP BY 1, 2, 3;

-- The same figures rolled up per day (the totals and the report by day read a row a
-- day) and per day and category, written with sales_daily.
CREATE TABLE sales_days (
    day               TEXT    NOT NULL PRIMARY KEY,
    orders            INTEGER NOT NULL DEFAULT 0,
    units             INTEGER NOT NULL DEFAULT 0,
    revenue           INTEGER NOT NULL DEFAULT 0,
    cancelled_orders  INTEGER NOT NULL DEFAULT 0,
    cancelled_units   INTEGER NOT NULL DEFAULT 0,
    cancelled_revenue INTEGER NOT NULL DEFAULT 0
) STRICT, WITHOUT ROWID;
INSERT INTO sales_days (day, orders, units)
SELECT day, sum(orders), sum(units) FROM sales_daily GROUP BY day;

CREATE TABLE sales_categories (
    day               TEXT    NOT NULL,
    category_id       INTEGER NOT NULL,
    orders            INTEGER NOT NULL DEFAULT 0,
    units             INTEGER NOT NULL DEFAULT 0,
    revenue           INTEGER NOT NULL DEFAULT 0,
    cancelled_orders  INTEGER NOT NULL DEFAULT 0,
    cancelled_units   INTEGER NOT NULL DEFAULT 0,
    cancelled_revenue INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, category_id)
) STRICT, WITHOUT ROWID;
INSERT INTO sales_categories (day, category_id, orders, units)
SELECT day, category_id, sum(orders), sum(units) FROM sales_daily GROUP BY day, category_id;

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- +goose Down
DROP TABLE settings;
DROP TABLE sales_categories;
DROP TABLE sales_days;
DROP TABLE sales_daily;
DROP INDEX orders_status_created;
DROP INDEX orders_created;
DROP INDEX orders_account_created;
CREATE INDEX orders_account ON orders (account_id, id);
DELETE FROM orders WHERE status = 'cancelled';
ALTER TABLE orders DROP COLUMN category_id;
ALTER TABLE orders DROP COLUMN pet_name;
ALTER TABLE orders DROP COLUMN unit_price;
ALTER TABLE orders DROP COLUMN cancelled_at;
ALTER TABLE orders DROP COLUMN completed_at;
ALTER TABLE orders DROP COLUMN status;
DROP TABLE archived_pets;
ALTER TABLE pets DROP COLUMN orders;
ALTER TABLE pets DROP COLUMN price;
