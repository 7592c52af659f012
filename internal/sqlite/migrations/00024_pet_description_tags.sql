-- A pet's description and tags (issue 35). tags holds the tags as written, joined by
-- tabs (a tag, a name, has no control character); tag_keys their TagKeys, each between
-- tabs ("\tcalm\tsmall\t"), so that a filter checks a pet's row for a tag with instr.
-- pet_tags files each pet under each of its tag keys, in id order: the tag filter
-- walks the list of one tag, the one with the fewest pets (tag_counts), and checks the
-- others on the pet's row, so that a search for a rare tag and a common one reads the
-- rare one's few entries, not the common one's many.

-- +goose Up
ALTER TABLE pets ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE pets ADD COLUMN tags TEXT NOT NULL DEFAULT '';
ALTER TABLE pets ADD COLUMN tag_keys TEXT NOT NULL DEFAULT '';
CREATE TABLE pet_tags (
    tag_key TEXT    NOT NULL,
    pet_id  INTEGER NOT NULL,
    PRIMARY KEY (tag_key, pet_id)
) WITHOUT ROWID;
CREATE TABLE tag_counts (
    tag_key TEXT    NOT NULL PRIMARY KEY,
    pets    INTEGER NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE tag_counts;
DROP TABLE pet_tags;
ALTER TABLE pets DROP COLUMN tag_keys;
ALTER TABLE pets DROP COLUMN tags;
ALTER TABLE pets DROP COLUMN description;
