// Package datamigration holds the data migrations (in Go) that both stores run,
// written in SQL that SQLite and PostgreSQL read alike ($n parameters). It runs
// nothing itself: each store registers them with goose under its own version number.
package datamigration

import (
	"context"
	"database/sql"

	"github.com/acme-pets/petstore/internal/petstore"
)

// RekeyEmails stores every account under petstore.EmailKey as it is now: keys made
// before it repeated its steps could differ for rare addresses, which a lookup would
// then no longer find. petstore.Rekey decides which keys change.
func RekeyEmails(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, email, email_lower FROM accounts`)
	if err != nil {
		return err
	}
	var stored []petstore.StoredEmail
	for rows.Next() {
		var s petstore.StoredEmail
		if err := rows.Scan(&s.ID, &s.Email, &s.Key); err != nil {
			rows.Close()
			return err
		}
		stored = append(stored, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range petstore.Rekey(stored) {
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET email_lower = $1 WHERE id = $2`, c.Key, c.ID); err != nil {
			return err
		}
	}
	return nil
}

// LowerPetNames fills pets.name_lower with petstore.NameKey of every pet's name, for
// the pets stored before the column (the name filter of the pet list reads it).
func LowerPetNames(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, name FROM pets WHERE name_lower = ''`)
	if err != nil {
		return err
	}
	type pet struct {
		id   int64
		name string
	}
	var pets []pet
	for rows.Next() {
		var p pet
		if err := rows.Scan(&p.id, &p.name); err != nil {
			rows.Close()
			return err
		}
		pets = append(pets, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(pets) == 0 {
		return nil
	}
	update, err := tx.PrepareContext(ctx, `UPDATE pets SET name_lower = $1 WHERE id = $2`)
	if err != nil {
		return err
	}
	defer update.Close()
	for _, p := range pets {
		if _, err := update.ExecContext(ctx, petstore.NameKey(p.name), p.id); err != nil {
			return err
		}
	}
	return nil
}
