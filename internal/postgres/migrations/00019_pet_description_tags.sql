-- A pet's description and tags (issue 35): tags as written, and tag_keys their
-- TagKeys under a GIN index, which serves the tag filter (tag_keys @> the keys sought)
-- as name_grams serves the name's.

-- +goose Up
ALTER TABLE pets ADD COLUMN description text NOT NULL DEFAULT '';
ALTER TABLE pets ADD COLUMN tags text[] NOT NULL DEFAULT '{}';
ALTER TABLE pets ADD COLUMN tag_keys text[] NOT NULL DEFAULT '{}';
CREATE INDEX pets_tag_keys ON pets USING gin (tag_keys);

-- +goose Down
DROP INDEX pets_tag_keys;
ALTER TABLE pets DROP COLUMN tag_keys;
ALTER TABLE pets DROP COLUMN tags;
ALTER TABLE pets DROP COLUMN description;
