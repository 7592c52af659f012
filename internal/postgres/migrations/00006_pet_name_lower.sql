-- The name filter of GET /pets finds a pet by a part of its name in any letter case.
-- PostgreSQL's lower() and ILIKE depend on the database's collation and ctype (and
-- SQLite's fold ASCII letters only), so Go folds: name_lower is petstore.NameKey of the
-- name, written with the name on every insert and update, as categories.name_lower is,
-- and searched with strpos. Migration 7 (Go, sqlmigrate.LowerPetNames) fills it for the
-- pets stored before. As on SQLite (its migrations 9 and 10).

-- +goose Up
ALTER TABLE pets ADD COLUMN name_lower text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE pets DROP COLUMN name_lower;
