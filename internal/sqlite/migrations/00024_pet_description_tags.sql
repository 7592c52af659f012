-- A pet's description and tags (issue 35). tags holds the tags as written, joined by
-- tabs (a tag, a name, has no control character); tag_keys their TagKeys, each between
-- tabs ("\tcalm\tsmall\t"), so that a filter checks a pet's row for a tag with instr.
-- pet_tag_terms is the index of the tag filter, as pet_name_grams is the name's: a
-- contentless FTS5 table whose row for a pet (rowid = pets.id) holds the hex of each
-- tag key as one term, so that a search for several tags intersects their lists.

-- +goose Up
ALTER TABLE pets ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE pets ADD COLUMN tags TEXT NOT NULL DEFAULT '';
ALTER TABLE pets ADD COLUMN tag_keys TEXT NOT NULL DEFAULT '';
CREATE VIRTUAL TABLE pet_tag_terms USING fts5(
    terms, content='', contentless_delete=1, detail=none, tokenize='ascii');
INSERT INTO pet_tag_terms (pet_tag_terms, rank) VALUES ('automerge', 2);

-- +goose Down
DROP TABLE pet_tag_terms;
ALTER TABLE pets DROP COLUMN tag_keys;
ALTER TABLE pets DROP COLUMN tags;
ALTER TABLE pets DROP COLUMN description;
