package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

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
	err := db.pool.QueryRow(ctx,
		`INSERT INTO pets (name, name_lower, name_grams, category_id, status, stock, price, description, tags, tag_keys)
		 VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8, $9) RETURNING id`,
		f.Name, key, petstore.NameGrams(key), f.CategoryID, string(f.Status), f.Price, f.Description, p.Tags, tagKeys(p.Tags),
	).Scan(&p.ID)
	if isForeignKey(err) {
		return petstore.Pet{}, petstore.UnknownCategory()
	}
	if err != nil {
		return petstore.Pet{}, fmt.Errorf("create pet: %w", err)
	}
	return p, nil
}

// tagKeys is the tag_keys column of a pet's tags, which the GIN index pets_tag_keys
// serves: the TagKey of each.
func tagKeys(tags []string) []string {
	keys := make([]string, len(tags))
	for i, t := range tags {
		keys[i] = petstore.TagKey(t)
	}
	return keys
}

const (
	petColumns = `id, name, category_id, status, stock, price, description, tags, photos`
	qPet       = `SELECT ` + petColumns + ` FROM pets WHERE id = $1`
)

func scanPet(row pgx.Row) (p petstore.Pet, err error) {
	var photos string
	if err = row.Scan(&p.ID, &p.Name, &p.CategoryID, (*string)(&p.Status), &p.Stock, &p.Price, &p.Description, &p.Tags, &photos); err != nil {
		return p, err
	}
	p.Photos, err = petstore.UnmarshalPhotos(photos)
	return p, err
}

// Pet finds a pet by id, from the pet cache when it has it (see petcache.go); misses
// of one pet at once share one read (petcache.Cache.Load).
func (db *DB) Pet(ctx context.Context, id int64) (petstore.Pet, error) {
	return db.pets.Load(ctx, id, func() (petstore.Pet, error) {
		return one(ctx, db, "pet", func() error { return petstore.PetNotFound(id) }, scanPet, qPet, id)
	})
}

// Pets lists one page of the pets that match every filter, by id, in one round
// trip.
func (db *DB) Pets(ctx context.Context, f petstore.PetFilter, p petstore.Page) ([]petstore.Pet, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	q, args := petsQuery(petColumns, f, p)
	return list(ctx, db, "pets", min(p.Size(), petstore.MaxLimit), scanPet, q, args...)
}

// petsQuery is the query of one page of the columns of the pets that match every
// filter of f, by id: the pet list and the inventory list. It is built from the
// filters that are set (a few shapes per list, each prepared once per connection),
// rather than one query with optional conditions, so that PostgreSQL plans each shape
// for the indexes it can use. The id list is one array parameter whatever its length.
//
// The name is looked for in name_lower (NameKey of the name, written with it) with
// strpos, which compares characters exactly: no wildcards, no collation, the same as
// on SQLite; name_grams @> the text's terms is what an index serves (see
// indexPetNames). Whether to walk pets in id order and check each (a common text,
// whose first matches fill the page) or to collect the candidates from the GIN index
// and sort them (a rare text) depends on the text, which the planner can weigh only
// when it plans with it: the name query is sent unprepared (QueryExecModeExec, the
// first argument), so that each search gets a plan for its own terms rather than a
// generic plan made for any.
func petsQuery(columns string, f petstore.PetFilter, p petstore.Page) (string, []any) {
	var (
		q    strings.Builder
		args = make([]any, 1, 8)
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args)-1)
	}
	q.WriteString(`SELECT ` + columns + ` FROM pets WHERE id > ` + arg(p.After))
	if f.Status != "" {
		q.WriteString(` AND status = ` + arg(string(f.Status)))
	}
	if f.CategoryID != 0 {
		q.WriteString(` AND category_id = ` + arg(f.CategoryID))
	}
	if len(f.IDs) > 0 {
		q.WriteString(` AND id = ANY(` + arg(f.IDs) + `)`)
	}
	if f.Name != "" {
		key := petstore.NameKey(f.Name)
		q.WriteString(` AND name_grams @> ` + arg(petstore.SearchGrams(key)) + `::text[]`)
		q.WriteString(` AND strpos(name_lower, ` + arg(key) + `) > 0`)
	}
	if len(f.Tags) > 0 {
		q.WriteString(` AND tag_keys @> ` + arg(f.TagKeys()) + `::text[]`)
	}
	q.WriteString(` ORDER BY id LIMIT ` + arg(p.Size()))
	if f.Name == "" && len(f.Tags) == 0 {
		return q.String(), args[1:]
	}
	args[0] = pgx.QueryExecModeExec
	return q.String(), args
}

// UpdatePet changes a pet to what change returns, in one transaction that holds the
// pet's row lock, so that the status change is checked by CheckStatusChange against
// the status the pet really has (an order in another process may have just made it
// pending). The category is checked by the foreign key. The stock is not touched.
// Its events are RevisedEvents' (a new status writes pet.status_changed).
func (db *DB) UpdatePet(ctx context.Context, id int64, change func(petstore.PetFields) (petstore.PetFields, error)) (petstore.Pet, error) {
	var pet petstore.Pet
	err := db.updateWithEvents(ctx, func(tx pgx.Tx) ([]petstore.Event, error) {
		cur, err := scanPet(tx.QueryRow(ctx, qPet+` FOR UPDATE`, id))
		if noRows(err) {
			return nil, petstore.PetNotFound(id)
		}
		if err != nil {
			return nil, err
		}
		f, err := cur.Revise(change)
		if err != nil {
			return nil, err
		}
		// The terms are written even when the name key stays: an equal array is no
		// change to the index (the row may even be updated in place).
		key := petstore.NameKey(f.Name)
		pet = f.Pet(id, cur.Stock)
		pet.Photos = cur.Photos
		_, err = tx.Exec(ctx,
			`UPDATE pets SET name = $1, name_lower = $2, name_grams = $3, category_id = $4, status = $5, price = $6,
			 description = $7, tags = $8, tag_keys = $9 WHERE id = $10`,
			f.Name, key, petstore.NameGrams(key), f.CategoryID, string(f.Status), f.Price, f.Description, pet.Tags, tagKeys(pet.Tags), id)
		if isForeignKey(err) {
			return nil, petstore.UnknownCategory()
		}
		if err != nil {
			return nil, err
		}
		return petstore.RevisedEvents(cur, pet, timestamp(db.now())), nil
	})
	db.changed(id)
	if err != nil {
		return petstore.Pet{}, fmt.Errorf("update pet: %w", err)
	}
	return pet, nil
}

// DeletePet removes a pet from the catalogue; one with incomplete orders is
// EConflict. A pet that had orders is archived first (archived_pets), where the sales
// report finds its name; its orders keep their own copy of it.
func (db *DB) DeletePet(ctx context.Context, id int64) error {
	err := db.update(ctx, func(tx pgx.Tx) error {
		p, st, err := lockPet(ctx, tx, id)
		if err != nil {
			return err
		}
		archive, err := st.CanDelete(id)
		if err != nil {
			return err
		}
		if archive {
			if _, err := tx.Exec(ctx, `INSERT INTO archived_pets (id, name, category_id, price, archived_at) VALUES ($1, $2, $3, $4, $5)`,
				id, p.Name, p.CategoryID, p.Price, timestamp(db.now())); err != nil {
				return err
			}
		}
		if _, err = tx.Exec(ctx, `DELETE FROM photos WHERE pet_id = $1`, id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM pets WHERE id = $1`, id)
		return err
	})
	db.changed(id)
	if err != nil {
		return fmt.Errorf("delete pet: %w", err)
	}
	return nil
}
