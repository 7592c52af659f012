-- Nothing reads orders by pet any more (the open-order count lives on the pet since
-- 00002), so this index only cost a write on every order.

-- +goose Up
DROP INDEX orders_pet_complete;

-- +goose Down
CREATE INDEX orders_pet_complete ON orders (pet_id, complete);
