-- The name filter of GET /pets is served by an index (issue 20): a trigram full-text
-- index of pets.name_lower for text of 3 characters or more (FTS5's trigram
-- tokenizer finds every name holding a substring; instr then checks it exactly), and
-- a B-tree index of name_lower for shorter text, which is looked for at the start of
-- names. The FTS table holds no copy of the names (content='pets'); triggers keep it
-- in step with inserts, renames and deletions, and never fire on a stock change.

-- +goose Up
CREATE VIRTUAL TABLE pet_names USING fts5(name_lower, content='pets', content_rowid='id',
    tokenize='trigram case_sensitive 1');
INSERT INTO pet_names (pet_names) VALUES ('rebuild');

-- +goose StatementBegin
CREATE TRIGGER pet_names_insert AFTER INSERT ON pets BEGIN
    INSERT INTO pet_names (rowid, name_lower) VALUES (new.id, new.name_lower);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER pet_names_delete AFTER DELETE ON pets BEGIN
    INSERT INTO pet_names (pet_names, rowid, name_lower) VALUES ('delete', old.id, old.name_lower);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER pet_names_update AFTER UPDATE OF name_lower ON pets BEGIN
    INSERT INTO pet_names (pet_names, rowid, name_lower) VALUES ('delete', old.id, old.name_lower);
    INSERT INTO pet_names (rowid, name_lower) VALUES (new.id, new.name_lower);
END;
-- +goose StatementEnd

CREATE INDEX pets_name_lower ON pets (name_lower);

-- +goose Down
DROP INDEX pets_name_lower;
DROP TRIGGER pet_names_update;
DROP TRIGGER pet_names_delete;
DROP TRIGGER pet_names_insert;
DROP TABLE pet_names;
