package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/acme-pets/petstore/internal/petstore"
)

// CreatePet validates f and adds a pet with a stock of 0; an unknown category is
// EValidationFailed on categoryId.
func (db *DB) CreatePet(ctx context.Context, f petstore.PetFields) (petstore.Pet, error) {
	if err := f.Validate(); err != nil {
		return petstore.Pet{}, err
	}
	p := f.Pet(0, 0)
	key := petstore.NameKey(f.Name)
	err := db.update(ctx, func(tx *sql.Tx) error {
		// An unknown category fails the foreign key, reported as petstore.UnknownCategory().
		err := tx.QueryRowContext(ctx,
			`INSERT INTO pets (name, name_lower, category_id, status, stock, price, description, tags, tag_keys) VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?) RETURNING id`,
			f.Name, key, f.CategoryID, string(f.Status), nullInt64(f.Price), f.Description, joinTags(f.Tags), tagKeysColumn(f.Tags),
		).Scan(&p.ID)
		if err != nil {
			return err
		}
		if err := indexPetName(ctx, tx, p.ID, key); err != nil {
			return err
		}
		return indexPetTags(ctx, tx, p.ID, f.Tags)
	})
	if isForeignKey(err) {
		return petstore.Pet{}, petstore.UnknownCategory()
	}
	if err != nil {
		return petstore.Pet{}, fmt.Errorf("create pet: %w", err)
	}
	return p, nil
}

const (
	petColumns = `id, name, category_id, status, stock, price, description, tags, photos`
	qPet       = `SELECT ` + petColumns + ` FROM pets WHERE id = ?`
)

func scanPet(row scanner) (p petstore.Pet, err error) {
	var (
		price        sql.NullInt64
		tags, photos string
	)
	if err = row.Scan(&p.ID, &p.Name, &p.CategoryID, (*string)(&p.Status), &p.Stock, &price, &p.Description, &tags, &photos); err != nil {
		return p, err
	}
	p.Price, p.Tags = nullInt(price), splitTags(tags)
	p.Photos, err = petstore.UnmarshalPhotos(photos)
	return p, err
}

// nullInt reads a nullable integer column.
func nullInt(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

// nullInt64 writes a nullable integer column.
func nullInt64(p *int64) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *p, Valid: true}
}

// Pet finds a pet by id, from the pet cache when it has it (package petcache); misses
// of one pet at once share one read, as on PostgreSQL.
func (db *DB) Pet(ctx context.Context, id int64) (petstore.Pet, error) {
	return db.pets.Load(ctx, id, func() (petstore.Pet, error) {
		s, err := db.readStmt(ctx, qPet)
		if err != nil {
			return petstore.Pet{}, fmt.Errorf("pet: %w", err)
		}
		p, err := scanPet(s.QueryRowContext(uncancelled(ctx), id))
		if errors.Is(err, sql.ErrNoRows) {
			return petstore.Pet{}, petstore.PetNotFound(id)
		}
		if err != nil {
			return petstore.Pet{}, fmt.Errorf("pet: %w", err)
		}
		return p, nil
	})
}

// Pets lists one page of the pets that match every filter, by id.
func (db *DB) Pets(ctx context.Context, f petstore.PetFilter, p petstore.Page) ([]petstore.Pet, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	ctx = uncancelled(ctx)
	var drive string
	if len(f.Tags) > 0 && f.Name == "" && len(f.IDs) == 0 {
		key, ok, err := db.rarestTag(ctx, f.TagKeys())
		if err != nil {
			return nil, fmt.Errorf("pets: %w", err)
		}
		if !ok {
			return []petstore.Pet{}, nil // a tag no pet has: nothing to walk
		}
		drive = key
	}
	q, args := petsQuery(petColumns, f, p, drive)
	return list(ctx, db, "pets", min(p.Size(), petstore.MaxLimit), scanPet, q, args...)
}

// petsQuery is the query of one page of the columns of the pets that match every
// filter of f, by id: the pet list and the inventory list. The id list is passed as
// one JSON array, so that the query has one shape (and one prepared statement)
// whatever the number of ids. Status, category and ids have their indexes.
//
// The name is looked for in name_lower (NameKey of the name, written with it) with
// instr, which compares characters exactly: no wildcards, no collation, the same on
// PostgreSQL. Without ids, the pets come from pet_name_grams (see nameMatch), which
// hands out the rowids of the pets filed under every term of the name in rowid
// order, and the CROSS JOIN keeps it the outer loop: the page ends after its last
// pet, whether the name is rare (few candidates) or common (many, of which the
// first ones fill the page), and instr drops the candidates that hold the terms but
// not the text. With ids, the ids (at most 100, as the document bounds them) bound the work
// better than the terms of a common name would.
//
// drive, when set, is the tag key whose list (pet_tags) the query walks, for a tag
// filter without a name or ids: the caller's pick, the tag with the fewest pets.
func petsQuery(columns string, f petstore.PetFilter, p petstore.Page, drive string) (string, []any) {
	var (
		q    strings.Builder
		args = make([]any, 0, 7)
	)
	byName := f.Name != "" && len(f.IDs) == 0
	byTags := !byName && drive != "" && len(f.IDs) == 0
	switch {
	case byName:
		q.WriteString(`SELECT ` + columns + ` FROM pet_name_grams CROSS JOIN pets ON pets.id = pet_name_grams.rowid
			WHERE pet_name_grams MATCH ? AND pet_name_grams.rowid > ?`)
		args = append(args, nameMatch(petstore.NameKey(f.Name)), p.After)
	case byTags:
		q.WriteString(`SELECT ` + columns + ` FROM pet_tags CROSS JOIN pets ON pets.id = pet_tags.pet_id
			WHERE pet_tags.tag_key = ? AND pet_tags.pet_id > ?`)
		args = append(args, drive, p.After)
	default:
		q.WriteString(`SELECT ` + columns + ` FROM pets WHERE id > ?`)
		args = append(args, p.After)
	}
	if f.Status != "" {
		q.WriteString(` AND status = ?`)
		args = append(args, string(f.Status))
	}
	if f.CategoryID != 0 {
		q.WriteString(` AND category_id = ?`)
		args = append(args, f.CategoryID)
	}
	if len(f.IDs) > 0 {
		q.WriteString(` AND id IN (SELECT value FROM json_each(?))`)
		args = append(args, idsJSON(f.IDs))
	}
	if f.Name != "" {
		q.WriteString(` AND instr(name_lower, ?) > 0`)
		args = append(args, petstore.NameKey(f.Name))
	}
	for _, k := range f.TagKeys() {
		if !byTags || k != drive {
			q.WriteString(` AND instr(tag_keys, ?) > 0`)
			args = append(args, tagKeyArg(k))
		}
	}
	switch {
	case byName:
		q.WriteString(` ORDER BY pet_name_grams.rowid LIMIT ?`)
	case byTags:
		q.WriteString(` ORDER BY pet_tags.pet_id LIMIT ?`)
	default:
		q.WriteString(` ORDER BY id LIMIT ?`)
	}
	args = append(args, p.Size())
	return q.String(), args
}

// idsJSON writes ids as a JSON array of numbers.
func idsJSON(ids []int64) string {
	b := make([]byte, 0, 2+len(ids)*8)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// UpdatePet changes a pet to what change returns, in one transaction: the result is
// validated, its status change checked under CheckStatusChange and its category checked as
// CreatePet does. The stock is not touched. Its events are RevisedEvents' (a new
// status writes pet.status_changed).
func (db *DB) UpdatePet(ctx context.Context, id int64, change func(petstore.PetFields) (petstore.PetFields, error)) (petstore.Pet, error) {
	defer db.pets.Forget(id)
	var pet petstore.Pet
	err := db.updateWithEvents(ctx, func(tx *sql.Tx) ([]petstore.Event, error) {
		cur, err := scanPet(tx.QueryRowContext(ctx, qPet, id))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, petstore.PetNotFound(id)
		}
		if err != nil {
			return nil, err
		}
		f, err := cur.Revise(change)
		if err != nil {
			return nil, err
		}
		key := petstore.NameKey(f.Name)
		tagKeys := tagKeysColumn(f.Tags)
		_, err = tx.ExecContext(ctx,
			`UPDATE pets SET name = ?, name_lower = ?, category_id = ?, status = ?, price = ?, description = ?, tags = ?, tag_keys = ? WHERE id = ?`,
			f.Name, key, f.CategoryID, string(f.Status), nullInt64(f.Price), f.Description, joinTags(f.Tags), tagKeys, id)
		if isForeignKey(err) {
			return nil, petstore.UnknownCategory()
		}
		if err != nil {
			return nil, err
		}
		// Only a new name key changes the pet's terms: a new status or category,
		// or a name in another letter case, leaves the index alone.
		if key != petstore.NameKey(cur.Name) {
			if err := unindexPetName(ctx, tx, id); err != nil {
				return nil, err
			}
			if err := indexPetName(ctx, tx, id, key); err != nil {
				return nil, err
			}
		}
		if tagKeys != tagKeysColumn(cur.Tags) {
			if err := unindexPetTags(ctx, tx, id, cur.Tags); err != nil {
				return nil, err
			}
			if err := indexPetTags(ctx, tx, id, f.Tags); err != nil {
				return nil, err
			}
		}
		pet = f.Pet(id, cur.Stock)
		pet.Photos = cur.Photos
		return petstore.RevisedEvents(cur, pet, db.now().UTC()), nil
	})
	if err != nil {
		return petstore.Pet{}, fmt.Errorf("update pet: %w", err)
	}
	return pet, nil
}

// DeletePet removes a pet from the catalogue; one with incomplete orders is
// EConflict. A pet that had orders is archived first (archived_pets), where the sales
// report finds its name; its orders keep their own copy of it.
func (db *DB) DeletePet(ctx context.Context, id int64) error {
	defer db.pets.Forget(id)
	err := db.update(ctx, func(tx *sql.Tx) error {
		p, st, err := loadPetState(ctx, db, tx, id)
		if err != nil {
			return err
		}
		archive, err := st.CanDelete(id)
		if err != nil {
			return err
		}
		if archive {
			if _, err := tx.ExecContext(ctx, `INSERT INTO archived_pets (id, name, category_id, price, archived_at) VALUES (?, ?, ?, ?, ?)`,
				id, p.Name, p.CategoryID, nullInt64(p.Price), formatTime(db.now())); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM pets WHERE id = ?`, id); err != nil {
			return err
		}
		if err := unindexPetTags(ctx, tx, id, p.Tags); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM photos WHERE pet_id = ?`, id); err != nil {
			return err
		}
		return unindexPetName(ctx, tx, id)
	})
	if err != nil {
		return fmt.Errorf("delete pet: %w", err)
	}
	return nil
}
