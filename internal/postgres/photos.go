package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
)

// A pet's photos are in its row (pets.photos, petstore.MarshalPhotos) and, one row per
// photo, in photos (see migration 20). Each change holds the pet's row lock, so that
// two changes at once, in any process, apply one after the other.

// AddPetPhoto adds p last to the photos of the pet.
func (db *DB) AddPetPhoto(ctx context.Context, petID int64, p petstore.Photo) (petstore.Pet, error) {
	return db.changePhotos(ctx, petID, "add pet photo", func(tx pgx.Tx, have []petstore.Photo) ([]petstore.Photo, error) {
		if len(have) >= petstore.MaxPhotosPerPet {
			return nil, petstore.TooManyPhotos(petID)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO photos (id, pet_id) VALUES ($1, $2)`, p.ID, petID); err != nil {
			return nil, err
		}
		return append(have, p), nil
	})
}

// RemovePetPhoto takes a photo off the pet.
func (db *DB) RemovePetPhoto(ctx context.Context, petID int64, photoID string) (petstore.Pet, error) {
	return db.changePhotos(ctx, petID, "remove pet photo", func(tx pgx.Tx, have []petstore.Photo) ([]petstore.Photo, error) {
		for i, p := range have {
			if p.ID == photoID {
				if _, err := tx.Exec(ctx, `DELETE FROM photos WHERE id = $1`, photoID); err != nil {
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
	return db.changePhotos(ctx, petID, "reorder pet photos", func(_ pgx.Tx, have []petstore.Photo) ([]petstore.Photo, error) {
		return petstore.CheckPhotoOrder(petID, have, ids)
	})
}

// changePhotos applies change to the photos of the pet in one transaction that holds
// the pet's row lock, and returns the pet with the photos change made.
func (db *DB) changePhotos(ctx context.Context, petID int64, what string,
	change func(tx pgx.Tx, have []petstore.Photo) ([]petstore.Photo, error)) (petstore.Pet, error) {
	var pet petstore.Pet
	err := db.update(ctx, func(tx pgx.Tx) error {
		cur, err := scanPet(tx.QueryRow(ctx, qPet+` FOR UPDATE`, petID))
		if noRows(err) {
			return petstore.PetNotFound(petID)
		}
		if err != nil {
			return err
		}
		photos, err := change(tx, cur.Photos)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE pets SET photos = $1 WHERE id = $2`, petstore.MarshalPhotos(photos), petID); err != nil {
			return err
		}
		cur.Photos = photos
		pet = cur
		return nil
	})
	db.changed(petID)
	if err != nil {
		return petstore.Pet{}, fmt.Errorf("%s: %w", what, err)
	}
	return pet, nil
}

// KnownPhotos reports which of ids a pet has.
func (db *DB) KnownPhotos(ctx context.Context, ids []string) (map[string]bool, error) {
	rows, err := db.pool.Query(ctx, `SELECT id FROM photos WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("known photos: %w", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("known photos: %w", err)
	}
	known := make(map[string]bool, len(found))
	for _, id := range found {
		known[id] = true
	}
	return known, nil
}
