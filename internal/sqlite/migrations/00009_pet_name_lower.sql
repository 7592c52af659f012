-- The name filter of GET /pets finds a pet by a part of its name in any letter case.
-- SQLite's lower() and LIKE fold ASCII letters only (and PostgreSQL's depend on the
-- database's collation), so Go folds: name_lower is petstore.NameKey of the name,
-- written with the name on every insert and update, as categories.name_lower is, and
-- searched with instr. Migration 10 (Go, sqlmigrate.LowerPetNames) fills it for the
-- pets stored before.

-- +goose Up
ALTER TABLE pets ADD COLUMN name_lower TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE pets DROP COLUMN name_lower;
