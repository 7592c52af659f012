package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The tag filter is served by pet_tags (see migration 24), a list of the pets of each
// tag key in id order. A search walks the list of the tag with the fewest pets, by
// tag_counts, and checks the other tags on the pet's row (tag_keys); a search that
// another index drives (a name, ids) checks every tag on the row. An FTS5 table of
// whole tags was tried first: it intersects the lists of every tag asked for, and a
// rare tag beside one on half the pets cost 4.5 times more at 100,000 pets than at
// 1,000 (loadbench -scale); walking the rare one's list costs the same at both.

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

// tagKeyArg is the argument that instr looks for in tag_keys: the key between tabs.
func tagKeyArg(key string) string { return "\t" + key + "\t" }

const (
	qFileTag    = `INSERT INTO pet_tags (tag_key, pet_id) VALUES (?, ?)`
	qCountTag   = `INSERT INTO tag_counts (tag_key, pets) VALUES (?, 1) ON CONFLICT (tag_key) DO UPDATE SET pets = pets + 1`
	qUnfileTags = `DELETE FROM pet_tags WHERE pet_id = ? AND tag_key = ?`
	qUncountTag = `UPDATE tag_counts SET pets = pets - 1 WHERE tag_key = ?`
	qDropTag    = `DELETE FROM tag_counts WHERE tag_key = ? AND pets <= 0`
	qTagCounts  = `SELECT tag_key, pets FROM tag_counts WHERE tag_key IN (SELECT value FROM json_each(?))`
)

// indexPetTags files the pet with this id under each of its tags.
func indexPetTags(ctx context.Context, tx *sql.Tx, id int64, tags []string) error {
	for _, t := range tags {
		k := petstore.TagKey(t)
		if _, err := tx.ExecContext(ctx, qFileTag, k, id); err != nil {
			return fmt.Errorf("index pet tags: %w", err)
		}
		if _, err := tx.ExecContext(ctx, qCountTag, k); err != nil {
			return fmt.Errorf("count pet tags: %w", err)
		}
	}
	return nil
}

// unindexPetTags removes the pet with this id from the lists of its tags.
func unindexPetTags(ctx context.Context, tx *sql.Tx, id int64, tags []string) error {
	for _, t := range tags {
		k := petstore.TagKey(t)
		if _, err := tx.ExecContext(ctx, qUnfileTags, id, k); err != nil {
			return fmt.Errorf("unindex pet tags: %w", err)
		}
		if _, err := tx.ExecContext(ctx, qUncountTag, k); err != nil {
			return fmt.Errorf("count pet tags: %w", err)
		}
		if _, err := tx.ExecContext(ctx, qDropTag, k); err != nil { // a tag no pet has any more
			return fmt.Errorf("count pet tags: %w", err)
		}
	}
	return nil
}

// rarestTag returns the key of keys that the fewest pets have, to walk its list; ok
// is false when a key has no pets at all (then nothing matches).
func (db *DB) rarestTag(ctx context.Context, keys []string) (key string, ok bool, err error) {
	s, err := db.readStmt(ctx, qTagCounts)
	if err != nil {
		return "", false, err
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return "", false, err
	}
	rows, err := s.QueryContext(ctx, string(list))
	if err != nil {
		return "", false, fmt.Errorf("tag counts: %w", err)
	}
	defer rows.Close()
	found, least := 0, int64(-1)
	for rows.Next() {
		var (
			k string
			n int64
		)
		if err := rows.Scan(&k, &n); err != nil {
			return "", false, fmt.Errorf("tag counts: %w", err)
		}
		if n > 0 {
			found++
		}
		if n > 0 && (least < 0 || n < least) {
			key, least = k, n
		}
	}
	if err := rows.Err(); err != nil {
		return "", false, fmt.Errorf("tag counts: %w", err)
	}
	return key, found == len(keys), nil
}
