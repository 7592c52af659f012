package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
)

const (
	orderColumns   = `id, pet_id, account_id, quantity, ship_date, complete, created_at`
	qOrder         = `SELECT ` + orderColumns + ` FROM orders WHERE id = $1`
	qOwnedOrder    = `SELECT ` + orderColumns + ` FROM orders WHERE id = $1 AND account_id = $2`
	qDeleteOrder   = `DELETE FROM orders WHERE id = $1`
	qCompleteOrder = `UPDATE orders SET complete = true WHERE id = $1`
	qShipOrder     = `UPDATE orders SET ship_date = $1 WHERE id = $2`
)

func scanOrder(row pgx.Row) (petstore.Order, error) {
	var o petstore.Order
	if err := row.Scan(&o.ID, &o.PetID, &o.AccountID, &o.Quantity, &o.ShipDate, &o.Complete, &o.CreatedAt); err != nil {
		return petstore.Order{}, err
	}
	return o, nil
}

// orderQuery selects an order by id, scoped to owner when it is not 0.
func orderQuery(id, owner int64) (string, []any) {
	if owner != 0 {
		return qOwnedOrder, []any{id, owner}
	}
	return qOrder, []any{id}
}

// Order finds an order; with owner != 0, only among that account's orders, so that
// another account's order is not found (its existence is not revealed).
func (db *DB) Order(ctx context.Context, id, owner int64) (petstore.Order, error) {
	q, args := orderQuery(id, owner)
	return one(ctx, db, "order", func() error { return petstore.NotFound("Order", id) }, scanOrder, q, args...)
}

// ordersQuery is the query of one page of the orders that match every filter of f.
func ordersQuery(f petstore.OrderFilter, p petstore.Page) (string, []any) {
	q := `SELECT ` + orderColumns + ` FROM orders WHERE id > $1`
	args := []any{p.After}
	if f.AccountID != 0 {
		args = append(args, f.AccountID)
		q += ` AND account_id = $` + strconv.Itoa(len(args))
	}
	if f.Complete != nil {
		args = append(args, *f.Complete)
		q += ` AND complete = $` + strconv.Itoa(len(args))
	}
	args = append(args, p.Size())
	return q + ` ORDER BY id LIMIT $` + strconv.Itoa(len(args)), args
}

// Orders lists one page of the orders that match every filter, by id.
func (db *DB) Orders(ctx context.Context, f petstore.OrderFilter, p petstore.Page) ([]petstore.Order, error) {
	q, args := ordersQuery(f, p)
	return list(ctx, db, "orders", 0, scanOrder, q, args...)
}

// lockOrder reads an order and locks its row for the rest of tx, scoped to owner
// when it is not 0. The lock makes two cancellations of one order take turns: the
// second finds it gone rather than putting its quantity back a second time.
func lockOrder(ctx context.Context, tx pgx.Tx, id, owner int64) (petstore.Order, error) {
	q, args := orderQuery(id, owner)
	o, err := scanOrder(tx.QueryRow(ctx, q+` FOR UPDATE`, args...))
	if noRows(err) {
		return petstore.Order{}, petstore.NotFound("Order", id)
	}
	if err != nil {
		return petstore.Order{}, fmt.Errorf("lock order %d: %w", id, err)
	}
	return o, nil
}

// CancelOrder removes an incomplete order and applies CancelOrder to its pet; a
// complete order is EConflict. With owner != 0 another account's order is ENotFound.
// Locks are taken order first, then pet, as in UpdateOrder; PlaceOrder locks only
// the pet, so no two transactions wait on each other in a circle.
//
// It writes order.cancelled, with the order as it was, and the stock events of the
// units returned.
func (db *DB) CancelOrder(ctx context.Context, id, owner int64) error {
	err := db.updateWithEvents(ctx, func(tx pgx.Tx) ([]petstore.Event, error) {
		o, err := lockOrder(ctx, tx, id, owner)
		if err != nil {
			return nil, err
		}
		if err := o.CanCancel(); err != nil {
			return nil, err // before the pet, which a complete order outlives
		}
		p, cur, err := lockPet(ctx, tx, o.PetID)
		if err != nil {
			return nil, err
		}
		next, events, err := petstore.CancelOrder(o, p, cur, timestamp(db.now()))
		if err != nil {
			return nil, err
		}
		if err := savePetState(ctx, tx, o.PetID, next); err != nil {
			return nil, err
		}
		if _, err = tx.Exec(ctx, qDeleteOrder, id); err != nil {
			return nil, err
		}
		return events, nil
	})
	if err != nil {
		return fmt.Errorf("cancel order: %w", err)
	}
	return nil
}

// UpdateOrder sets an order's ship date and completes it under PetState.Fulfil.
// Completion is one-way: on a complete order, an update that changes nothing returns
// the order as it is, and any real change is EInvalidTransition. Complete set to
// false on an incomplete order changes nothing. Ship dates are kept to the
// microsecond, and compared so.
//
// Completing writes order.completed and, when the pet's status changes,
// pet.status_changed; a new ship date alone writes no event.
func (db *DB) UpdateOrder(ctx context.Context, id int64, u petstore.OrderUpdate) (petstore.Order, error) {
	ship := optionalTimestamp(u.ShipDate)
	var o petstore.Order
	err := db.updateWithEvents(ctx, func(tx pgx.Tx) ([]petstore.Event, error) {
		var err error
		if o, err = lockOrder(ctx, tx, id, 0); err != nil {
			return nil, err
		}
		if err := petstore.CheckOrderUpdate(o, petstore.OrderUpdate{Complete: u.Complete, ShipDate: ship}); err != nil || o.Complete {
			return nil, err
		}
		if ship != nil {
			if _, err := tx.Exec(ctx, qShipOrder, *ship, id); err != nil {
				return nil, err
			}
			o.ShipDate = ship
		}
		if u.Complete == nil || !*u.Complete {
			return nil, nil
		}
		p, cur, err := lockPet(ctx, tx, o.PetID)
		if err != nil {
			return nil, err
		}
		done, next, events := petstore.CompleteOrder(o, p, cur, timestamp(db.now()))
		if err := savePetState(ctx, tx, o.PetID, next); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, qCompleteOrder, id); err != nil {
			return nil, err
		}
		o = done
		return events, nil
	})
	if err != nil {
		return petstore.Order{}, fmt.Errorf("update order: %w", err)
	}
	return o, nil
}
