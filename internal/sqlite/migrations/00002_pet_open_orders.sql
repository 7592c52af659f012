-- The store rules look at how many incomplete orders a pet has on every order, cancel
-- and completion. Counting them made each order slower as orders piled up; the count is
-- kept on the pet instead, in the same transaction as every change to it.

-- +goose Up
ALTER TABLE pets ADD COLUMN open_orders INTEGER NOT NULL DEFAULT 0 CHECK (open_orders >= 0);
UPDATE pets SET open_orders = (SELECT count(*) FROM orders WHERE orders.pet_id = pets.id AND complete = 0);

-- +goose Down
ALTER TABLE pets DROP COLUMN open_orders;
