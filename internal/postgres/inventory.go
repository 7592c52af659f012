package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The store rules run on a PetState read under the pet's row lock and saved in the
// same transaction. The whole state (status, stock and the count of open orders) is
// in the pet's row, so the statement that takes the lock reads it: under READ
// COMMITTED a statement that waited for a row lock reads the row as the previous
// holder of the lock committed it.

const (
	qLockPetRow  = `SELECT ` + petColumns + `, open_orders, held, orders FROM pets WHERE id = $1 FOR UPDATE`
	qSetPetState = `UPDATE pets SET status = $1, stock = $2, open_orders = $3, held = $4, orders = $5 WHERE id = $6`
)

// lockPet locks a pet's row for the rest of tx and reads what the store rules look
// at, and the whole pet (its name and category go in a pet.status_changed event); an
// unknown pet is ENotFound.
func lockPet(ctx context.Context, tx pgx.Tx, petID int64) (petstore.Pet, petstore.PetState, error) {
	var (
		p      petstore.Pet
		status string
		open   int
		held   int
		orders int
		photos string
	)
	err := tx.QueryRow(ctx, qLockPetRow, petID).Scan(&p.ID, &p.Name, &p.CategoryID, &status, &p.Stock, &p.Price, &p.Description, &p.Tags, &photos, &open, &held, &orders)
	if noRows(err) {
		return p, petstore.PetState{}, petstore.PetNotFound(petID)
	}
	if err != nil {
		return p, petstore.PetState{}, fmt.Errorf("lock pet %d: %w", petID, err)
	}
	p.Status = petstore.PetStatus(status)
	if p.Photos, err = petstore.UnmarshalPhotos(photos); err != nil {
		return p, petstore.PetState{}, err
	}
	return p, petstore.PetState{Status: p.Status, Stock: p.Stock, OpenOrders: open, Held: held, Orders: orders}, nil
}

// savePetState writes a rule's result: status, stock, the count of open orders, the
// units they hold and the count of every order.
func savePetState(ctx context.Context, tx pgx.Tx, petID int64, st petstore.PetState) error {
	if _, err := tx.Exec(ctx, qSetPetState, string(st.Status), st.Stock, st.OpenOrders, st.Held, st.Orders, petID); err != nil {
		return fmt.Errorf("save pet %d: %w", petID, err)
	}
	return nil
}

const qInventory = `SELECT id, stock, status FROM pets WHERE id = $1`

func scanInventory(row pgx.Row) (it petstore.InventoryItem, err error) {
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
	q, args := petsQuery(`id, stock, status`, f.Pets(), p)
	return list(ctx, db, "inventories", 0, scanInventory, q, args...)
}

// SetInventory sets a pet's stock under PetState.Restock, which may change its status,
// and writes the stock events of the change (none when nothing changed).
func (db *DB) SetInventory(ctx context.Context, petID int64, quantity int) (petstore.InventoryItem, error) {
	var (
		st    petstore.PetState
		wrote bool
	)
	err := db.updateWithEvents(ctx, func(tx pgx.Tx) ([]petstore.Event, error) {
		p, cur, err := lockPet(ctx, tx, petID)
		if err != nil {
			return nil, err
		}
		var events []petstore.Event
		if st, events, err = petstore.SetStock(p, cur, quantity, timestamp(db.now())); err != nil {
			return nil, err
		}
		if st == cur {
			return nil, nil
		}
		wrote = true
		if err := savePetState(ctx, tx, petID, st); err != nil {
			return nil, err
		}
		return events, nil
	})
	if wrote {
		db.changed(petID)
	}
	if err != nil {
		return petstore.InventoryItem{}, fmt.Errorf("set inventory: %w", err)
	}
	return petstore.InventoryItem{PetID: petID, Quantity: st.Stock, Status: st.Status}, nil
}
