package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The tag filter is served by pet_tag_terms (see migration 24): a contentless FTS5
// table whose row for a pet holds the hex of each of its tag keys, one term each. A
// search for tags only walks the pets filed under all of them in id order; a search
// that another index drives (a name, ids) checks the pet's tag_keys column instead.

// joinTags is the tags column of a pet's tags: joined by tabs, "" for none.
func joinTags(tags []string) string { return strings.Join(tags, "\t") }

// splitTags reads the tags column.
func splitTags(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, "\t")
}

// tagKeysColumn is the tag_keys column of a pet's tags: each TagKey between tabs.
func tagKeysColumn(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range tags {
		b.WriteByte('\t')
		b.WriteString(petstore.TagKey(t))
	}
	b.WriteByte('\t')
	return b.String()
}

// tagTerms is the document of pet_tag_terms for a pet's tags.
func tagTerms(tags []string) string {
	keys := make([]string, len(tags))
	for i, t := range tags {
		keys[i] = petstore.TagKey(t)
	}
	return hexTerms(keys)
}

const (
	qIndexPetTags   = `INSERT INTO pet_tag_terms (rowid, terms) VALUES (?, ?)`
	qUnindexPetTags = `DELETE FROM pet_tag_terms WHERE rowid = ?`
)

// indexPetTags files the pet with this id under its tags; a pet without tags is left
// out of the index.
func indexPetTags(ctx context.Context, tx *sql.Tx, id int64, tags []string) error {
	if len(tags) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, qIndexPetTags, id, tagTerms(tags)); err != nil {
		return fmt.Errorf("index pet tags: %w", err)
	}
	return nil
}

// unindexPetTags removes the pet with this id from the tag index.
func unindexPetTags(ctx context.Context, tx *sql.Tx, id int64) error {
	if _, err := tx.ExecContext(ctx, qUnindexPetTags, id); err != nil {
		return fmt.Errorf("unindex pet tags: %w", err)
	}
	return nil
}
