-- A pet's stock and the units its open orders hold may together be at most the
-- document's maximum stock (petstore.PetState): a stock set to the maximum while
-- orders were open went past it when they were cancelled. held is kept on the pet, in
-- the same transaction as every change to it, as open_orders is. One pass over the
-- open orders fills it, and a stock already past the maximum is brought back to it.

-- +goose Up
ALTER TABLE pets ADD COLUMN held INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0);
UPDATE pets SET held = h.units
  FROM (SELECT pet_id, sum(quantity) AS units FROM orders WHERE complete = 0 GROUP BY pet_id) AS h
 WHERE pets.id = h.pet_id;
UPDATE pets SET stock = 1000000 WHERE stock > 1000000;

-- +goose Down
ALTER TABLE pets DROP COLUMN held;
