package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The store rules run on a PetState loaded and saved inside one write transaction.
// Write transactions are BEGIN IMMEDIATE, so the pet cannot change between the load
// and the save, in this process or any other.

const (
	qPetState    = `SELECT status, stock, open_orders, held, orders, name, category_id, price, description, tags, photos FROM pets WHERE id = ?`
	qSetPetState = `UPDATE pets SET status = ?, stock = ?, open_orders = ?, held = ?, orders = ? WHERE id = ?`
)

// loadPetState reads what the store rules look at, and the pet (whose name, category
// and price the events of its changes show and its orders keep); an unknown pet is
// ENotFound.
func loadPetState(ctx context.Context, db *DB, tx *sql.Tx, petID int64) (petstore.Pet, petstore.PetState, error) {
	s, err := db.txStmt(ctx, tx, qPetState)
	if err != nil {
		return petstore.Pet{}, petstore.PetState{}, err
	}
	var (
		st     petstore.PetState
		p      = petstore.Pet{ID: petID}
		status string
		price  sql.NullInt64
		tags   string
		photos string
	)
	err = s.QueryRowContext(ctx, petID).Scan(&status, &st.Stock, &st.OpenOrders, &st.Held, &st.Orders, &p.Name, &p.CategoryID, &price, &p.Description, &tags, &photos)
	if errors.Is(err, sql.ErrNoRows) {
		return petstore.Pet{}, petstore.PetState{}, petstore.PetNotFound(petID)
	}
	if err != nil {
		return petstore.Pet{}, petstore.PetState{}, fmt.Errorf("load pet %d: %w", petID, err)
	}
	st.Status = petstore.PetStatus(status)
	p.Status, p.Stock, p.Price, p.Tags = st.Status, st.Stock, nullInt(price), splitTags(tags)
	if p.Photos, err = petstore.UnmarshalPhotos(photos); err != nil {
		return petstore.Pet{}, petstore.PetState{}, err
	}
	return p, st, nil
}

// savePetState writes a rule's result: status, stock, the count of open orders, the
// units they hold and the count of every order.
func savePetState(ctx context.Context, db *DB, tx *sql.Tx, petID int64, st petstore.PetState) error {
	s, err := db.txStmt(ctx, tx, qSetPetState)
	if err != nil {
		return err
	}
	if _, err := s.ExecContext(ctx, string(st.Status), st.Stock, st.OpenOrders, st.Held, st.Orders, petID); err != nil {
		return fmt.Errorf("save pet %d: %w", petID, err)
	}
	return nil
}

const qInventory = `SELECT id, stock, status FROM pets WHERE id = ?`

func scanInventory(row scanner) (it petstore.InventoryItem, err error) {
	err = row.Scan(&it.PetID, &it.Quantity, (*string)(&it.Status))
	return it, err
}

// Inventory returns the stock of one pet.
func (db *DB) Inventory(ctx context.Context, petID int64) (petstore.InventoryItem, error) {
	return one(ctx, db, "inventory", func() error { return petstore.PetNotFound(petID) }, scanInventory, qInventory, petID)
}

// Inventories lists one page of the stock of the pets that match every filter, by
// pet id, with the query of the pet list.
func (db *DB) Inventories(ctx context.Context, f petstore.InventoryFilter, p petstore.Page) ([]petstore.InventoryItem, error) {
	q, args := petsQuery(`id, stock, status`, f.Pets(), p, "")
	return list(uncancelled(ctx), db, "inventories", 0, scanInventory, q, args...)
}

// SetInventory sets a pet's stock under PetState.Restock, which may change its status.
func (db *DB) SetInventory(ctx context.Context, petID int64, quantity int) (petstore.InventoryItem, error) {
	defer db.pets.Forget(petID)
	var st petstore.PetState
	err := db.updateWithEvents(ctx, func(tx *sql.Tx) ([]petstore.Event, error) {
		pet, cur, err := loadPetState(ctx, db, tx, petID)
		if err != nil {
			return nil, err
		}
		var events []petstore.Event
		if st, events, err = petstore.SetStock(pet, cur, quantity, db.now().UTC()); err != nil {
			return nil, err
		}
		if err := savePetState(ctx, db, tx, petID, st); err != nil {
			return nil, err
		}
		return events, nil
	})
	if err != nil {
		return petstore.InventoryItem{}, fmt.Errorf("set inventory: %w", err)
	}
	return petstore.InventoryItem{PetID: petID, Quantity: st.Stock, Status: st.Status}, nil
}
