package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/acme-pets/petstore/internal/migration"
	"github.com/acme-pets/petstore/internal/petstore"
)

// The name filter is served by pet_name_grams, an FTS5 table whose row for a pet
// (rowid = pets.id) holds the terms petstore.NameGrams makes of its name_lower. The
// terms are written in hex: FTS5's ascii tokenizer then takes each whole, whatever
// characters it stands for (a %, a space, an accented letter), and a term cannot be
// mistaken for query syntax. The table is contentless (the name is in pets), keeps no
// positions (detail=none: a search only intersects terms) and allows deletes by rowid.
// The store writes it in the transactions that create, rename and delete pets; nothing
// else writes names (placing an order saves status, stock and open orders only).

// nameTerms is the document of pet_name_grams for a name key.
func nameTerms(key string) string {
	return hexTerms(petstore.NameGrams(key))
}

// nameMatch is the MATCH expression of the pets whose name key may contain query (a
// NameKey): every one of its terms (FTS5 joins barewords with AND).
func nameMatch(query string) string {
	return hexTerms(petstore.SearchGrams(query))
}

func hexTerms(grams []string) string {
	var b strings.Builder
	for i, g := range grams {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(hex.EncodeToString([]byte(g)))
	}
	return b.String()
}

const (
	qIndexPetName   = `INSERT INTO pet_name_grams (rowid, grams) VALUES (?, ?)`
	qUnindexPetName = `DELETE FROM pet_name_grams WHERE rowid = ?`
)

// indexPetName files the pet with this id under the terms of its name key.
func indexPetName(ctx context.Context, tx *sql.Tx, id int64, key string) error {
	if _, err := tx.ExecContext(ctx, qIndexPetName, id, nameTerms(key)); err != nil {
		return fmt.Errorf("index pet name: %w", err)
	}
	return nil
}

// unindexPetName removes the pet with this id from the name index.
func unindexPetName(ctx context.Context, tx *sql.Tx, id int64) error {
	if _, err := tx.ExecContext(ctx, qUnindexPetName, id); err != nil {
		return fmt.Errorf("unindex pet name: %w", err)
	}
	return nil
}

// indexPetNames is migration 13: it creates pet_name_grams and files every pet
// stored before under its name_lower (which migration 10 filled).
func indexPetNames(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `CREATE VIRTUAL TABLE pet_name_grams USING fts5(
		grams, content='', contentless_delete=1, detail=none, tokenize='ascii')`); err != nil {
		return err
	}
	// Each pet created adds a segment, and a search seeks every term in every
	// segment: merging as soon as a level holds two (FTS5 waits for four) keeps
	// about one segment per level, and searches several times faster, for a little
	// more merging work on writes.
	if _, err := tx.ExecContext(ctx, `INSERT INTO pet_name_grams (pet_name_grams, rank) VALUES ('automerge', 2)`); err != nil {
		return err
	}
	pets, err := migration.PetKeys(ctx, tx)
	if err != nil {
		return err
	}
	for _, p := range pets {
		if err := indexPetName(ctx, tx, p.ID, p.Key); err != nil {
			return err
		}
	}
	return nil
}
