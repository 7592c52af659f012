package postgres

import (
	"context"
	"database/sql"

	"github.com/acme-pets/petstore/internal/migration"
	"github.com/acme-pets/petstore/internal/petstore"
)

// The name filter is served by pets.name_grams, the terms petstore.NameGrams makes of
// the pet's name_lower, under a GIN index: a search asks for the pets holding every
// term of its text (petstore.SearchGrams, with @>), and strpos drops the candidates
// that hold the terms but not the text. The array is written with the name, by the
// store; no extension is needed (pg_trgm would skip what is not a letter or digit in
// the database's locale, and serves no text shorter than three characters).

// indexPetNames is migration 10: it adds name_grams, fills it for every pet stored
// before from its name_lower (which migration 7 filled), and indexes it.
func indexPetNames(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `ALTER TABLE pets ADD COLUMN name_grams text[] NOT NULL DEFAULT '{}'`); err != nil {
		return err
	}
	pets, err := migration.PetKeys(ctx, tx)
	if err != nil {
		return err
	}
	if len(pets) > 0 {
		update, err := tx.PrepareContext(ctx, `UPDATE pets SET name_grams = $1 WHERE id = $2`)
		if err != nil {
			return err
		}
		defer update.Close()
		for _, p := range pets {
			if _, err := update.ExecContext(ctx, petstore.NameGrams(p.Key), p.ID); err != nil {
				return err
			}
		}
	}
	// Built after the fill, in one pass, rather than entry by entry.
	_, err = tx.ExecContext(ctx, `CREATE INDEX pets_name_grams ON pets USING gin (name_grams)`)
	return err
}
