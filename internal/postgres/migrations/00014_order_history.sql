-- Prices, an order's whole life, archived pets and the sales summary (issue 31); the
-- same as SQLite's migration 18, which says why each part is there.

-- +goose Up
ALTER TABLE pets ADD COLUMN price bigint CHECK (price BETWEEN 0 AND 100000000);
ALTER TABLE pets ADD COLUMN orders integer NOT NULL DEFAULT 0 CHECK (orders >= 0);
UPDATE pets SET orders = o.n
  FROM (SELECT pet_id, count(*) AS n FROM orders GROUP BY pet_id) AS o
 WHERE pets.id = o.pet_id;

CREATE TABLE archived_pets (
    id          bigint      PRIMARY KEY,
    name        text        NOT NULL,
    category_id bigint      NOT NULL,
    price       bigint,
    archived_at timestamptz NOT NULL
);

ALTER TABLE orders ADD COLUMN status text NOT NULL DEFAULT 'placed'
    CHECK (status IN ('placed', 'completed', 'cancelled'));
ALTER TABLE orders ADD COLUMN completed_at timestamptz;
ALTER TABLE orders ADD COLUMN cancelled_at timestamptz;
ALTER TABLE orders ADD COLUMN unit_price bigint;
ALTER TABLE orders ADD COLUMN pet_name text;
ALTER TABLE orders ADD COLUMN category_id bigint NOT NULL DEFAULT 0;
UPDATE orders SET status = 'completed' WHERE complete;
UPDATE orders SET pet_name = p.name, category_id = p.category_id
  FROM pets AS p
 WHERE p.id = orders.pet_id;
UPDATE orders SET completed_at = c.at
  FROM (SELECT (data::jsonb -> 'order' ->> 'id')::bigint AS order_id, min(created_at) AS at
          FROM events WHERE type = 'order.completed' GROUP BY 1) AS c
 WHERE orders.id = c.order_id AND orders.complete;

DROP INDEX orders_account;
CREATE INDEX orders_account_created ON orders (account_id, created_at, id);
CREATE INDEX orders_created ON orders (created_at, id);
CREATE INDEX orders_status_created ON orders (status, created_at, id);

CREATE TABLE sales_daily (
    day               date   NOT NULL,
    pet_id            bigint NOT NULL,
    category_id       bigint NOT NULL,
    stripe            smallint NOT NULL DEFAULT 0,
    orders            bigint NOT NULL DEFAULT 0,
    units             bigint NOT NULL DEFAULT 0,
    revenue           bigint NOT NULL DEFAULT 0,
    cancelled_orders  bigint NOT NULL DEFAULT 0,
    cancelled_units   bigint NOT NULL DEFAULT 0,
    cancelled_revenue bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (day, pet_id, category_id)
);
INSERT INTO sales_daily (day, pet_id, category_id, orders, units)
SELECT (created_at AT TIME ZONE 'UTC')::date, pet_id, category_id, count(*), sum(quantity)
  FROM orders GROUP BY 1, 2, 3;

-- The same figures rolled up per day (the totals and the report by day read a row a
-- day) and per day and category, written with sales_daily. Here each such row is split
-- in stripes (postgres/sales.go says why); the rows made from older orders are stripe 0.
CREATE TABLE sales_days (
    day               date     NOT NULL,
    stripe            smallint NOT NULL DEFAULT 0,
    orders            bigint NOT NULL DEFAULT 0,
    units             bigint NOT NULL DEFAULT 0,
    revenue           bigint NOT NULL DEFAULT 0,
    cancelled_orders  bigint NOT NULL DEFAULT 0,
    cancelled_units   bigint NOT NULL DEFAULT 0,
    cancelled_revenue bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (day, stripe)
);
INSERT INTO sales_days (day, orders, units)
SELECT day, sum(orders), sum(units) FROM sales_daily GROUP BY day;

CREATE TABLE sales_categories (
    day               date   NOT NULL,
    category_id       bigint NOT NULL,
    stripe            smallint NOT NULL DEFAULT 0,
    orders            bigint NOT NULL DEFAULT 0,
    units             bigint NOT NULL DEFAULT 0,
    revenue           bigint NOT NULL DEFAULT 0,
    cancelled_orders  bigint NOT NULL DEFAULT 0,
    cancelled_units   bigint NOT NULL DEFAULT 0,
    cancelled_revenue bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (day, category_id, stripe)
);
INSERT INTO sales_categories (day, category_id, orders, units)
SELECT day, category_id, sum(orders), sum(units) FROM sales_daily GROUP BY day, category_id;

CREATE TABLE settings (
    key   text PRIMARY KEY,
    value text NOT NULL
);

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
ALTER TABLE orders DROP COLUMN category_id, DROP COLUMN pet_name, DROP COLUMN unit_price,
    DROP COLUMN cancelled_at, DROP COLUMN completed_at, DROP COLUMN status;
DROP TABLE archived_pets;
ALTER TABLE pets DROP COLUMN orders, DROP COLUMN price;
