-- The name filter of GET /pets is served by an index (issue 20): pg_trgm's GIN index
-- of pets.name_lower for text of 3 characters or more (LIKE '%text%' with the text's
-- wildcards escaped), and a text_pattern_ops B-tree for shorter text, which is looked
-- for at the start of names (LIKE 'te%'). pg_trgm ships with PostgreSQL (Debian's
-- postgresql package has it); it is a trusted extension since PostgreSQL 13, so the
-- database's owner may create it, and it goes in schema public so that every schema
-- of the database (the tests make one each) sees its operator class.

-- +goose Up
-- Two schemas of one database migrating at once (the tests) may both create it: the
-- loser's unique violation means it exists.
-- +goose StatementBegin
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
EXCEPTION WHEN unique_violation THEN
    NULL;
END
$$;
-- +goose StatementEnd
CREATE INDEX pets_name_trgm ON pets USING gin (name_lower public.gin_trgm_ops);
CREATE INDEX pets_name_prefix ON pets (name_lower text_pattern_ops);

-- +goose Down
DROP INDEX pets_name_prefix;
DROP INDEX pets_name_trgm;
