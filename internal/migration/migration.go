// Package migration brings a store's schema up to date with goose, and holds the data
// migrations written in Go that both stores run, in SQL that SQLite and PostgreSQL read
// alike ($n parameters). Each store registers them under its own version numbers.
package migration

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Schema is how a store migrates: its dialect and SQL files, the lock its processes
// take turns on, and its migrations in Go, numbered among the files.
type Schema struct {
	Dialect goose.Dialect
	Files   fs.FS
	Locker  lock.SessionLocker
	Go      []*goose.Migration
}

// Up applies every migration of s that db has not had yet.
func Up(ctx context.Context, db *sql.DB, s Schema) error {
	p, err := goose.NewProvider(s.Dialect, db, s.Files, goose.WithSessionLocker(s.Locker), goose.WithGoMigrations(s.Go...))
	if err == nil {
		_, err = p.Up(ctx)
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// read runs query in tx and reads every row with scan.
func read[T any](ctx context.Context, tx *sql.Tx, query string, scan func(*sql.Rows) (T, error)) ([]T, error) {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, v)
	}
	return list, rows.Err()
}

// PetKey is a pet's id and its name_lower (petstore.NameKey of its name).
type PetKey struct {
	ID  int64
	Key string
}

// PetKeys reads every pet's name_lower, for a migration that indexes the names.
func PetKeys(ctx context.Context, tx *sql.Tx) ([]PetKey, error) {
	return read(ctx, tx, `SELECT id, name_lower FROM pets`, func(r *sql.Rows) (p PetKey, err error) {
		err = r.Scan(&p.ID, &p.Key)
		return p, err
	})
}

// RekeyEmails stores every account under petstore.EmailKey as it is now: keys made
// before it repeated its steps could differ for rare addresses, which a lookup would
// then no longer find. petstore.Rekey decides which keys change.
func RekeyEmails(ctx context.Context, tx *sql.Tx) error {
	stored, err := read(ctx, tx, `SELECT id, email, email_lower FROM accounts`, func(r *sql.Rows) (s petstore.StoredEmail, err error) {
		err = r.Scan(&s.ID, &s.Email, &s.Key)
		return s, err
	})
	if err != nil {
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
	type pet struct {
		id   int64
		name string
	}
	pets, err := read(ctx, tx, `SELECT id, name FROM pets WHERE name_lower = ''`, func(r *sql.Rows) (p pet, err error) {
		err = r.Scan(&p.id, &p.name)
		return p, err
	})
	if err != nil {
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
