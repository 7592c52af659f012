package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acme-pets/petstore/internal/petstore"
)

// A pet's photos are in its row (pets.photos, petstore.MarshalPhotos) and, one row per
// photo, in photos (see migration 25). Each change reads the pet's row in the write
// transaction, so that two changes at once apply one after the other.

// AddPetPhoto adds p last to the photos of the pet.
func (db *DB) AddPetPhoto(ctx context.Context, petID int64, p petstore.Photo) (petstore.Pet, error) {
	return db.changePhotos(ctx, petID, "add pet photo", func(tx *sql.Tx, have []petstore.Photo) ([]petstore.Photo, error) {
		if len(have) >= petstore.MaxPhotosPerPet {
			return nil, petstore.TooManyPhotos(petID)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO photos (id, pet_id) VALUES (?, ?)`, p.ID, petID); err != nil {
			return nil, err
		}
		return append(have, p), nil
	})
}

// RemovePetPhoto takes a photo off the pet.
func (db *DB) RemovePetPhoto(ctx context.Context, petID int64, photoID string) (petstore.Pet, error) {
	return db.changePhotos(ctx, petID, "remove pet photo", func(tx *sql.Tx, have []petstore.Photo) ([]petstore.Photo, error) {
		for i, p := range have {
			if p.ID == photoID {
				if _, err := tx.ExecContext(ctx, `DELETE FROM photos WHERE id = ?`, photoID); err != nil {
					return nil, err
				}
				return append(have[:i:i], have[i+1:]...), nil
			}
		}
		return nil, petstore.PhotoNotFound(petID, photoID)
	})
}

// ReorderPetPhotos puts the pet's photos in the order of ids.
func (db *DB) ReorderPetPhotos(ctx context.Context, petID int64, ids []string) (petstore.Pet, error) {
	return db.changePhotos(ctx, petID, "reorder pet photos", func(_ *sql.Tx, have []petstore.Photo) ([]petstore.Photo, error) {
		return petstore.CheckPhotoOrder(petID, have, ids)
	})
}

// changePhotos applies change to the photos of the pet in one write transaction, and
// returns the pet with the photos change made.
func (db *DB) changePhotos(ctx context.Context, petID int64, what string,
	change func(tx *sql.Tx, have []petstore.Photo) ([]petstore.Photo, error)) (petstore.Pet, error) {
	defer db.pets.Forget(petID)
	var pet petstore.Pet
	err := db.update(ctx, func(tx *sql.Tx) error {
		cur, err := scanPet(tx.QueryRowContext(ctx, qPet, petID))
		if errors.Is(err, sql.ErrNoRows) {
			return petstore.PetNotFound(petID)
		}
		if err != nil {
			return err
		}
		photos, err := change(tx, cur.Photos)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pets SET photos = ? WHERE id = ?`, petstore.MarshalPhotos(photos), petID); err != nil {
			return err
		}
		cur.Photos = photos
		pet = cur
		return nil
	})
	if err != nil {
		return petstore.Pet{}, fmt.Errorf("%s: %w", what, err)
	}
	return pet, nil
}

// KnownPhotos reports which of ids a pet has.
func (db *DB) KnownPhotos(ctx context.Context, ids []string) (map[string]bool, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT id FROM photos WHERE id IN (SELECT value FROM json_each(?))`, string(list))
	if err != nil {
		return nil, fmt.Errorf("known photos: %w", err)
	}
	defer rows.Close()
	known := make(map[string]bool, len(ids))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("known photos: %w", err)
		}
		known[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("known photos: %w", err)
	}
	return known, nil
}
