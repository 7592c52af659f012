package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
)

const (
	orderColumns = `id, pet_id, account_id, quantity, ship_date, complete, status, created_at, completed_at, cancelled_at,
		unit_price, pet_name, category_id`
	qOrder         = `SELECT ` + orderColumns + ` FROM orders WHERE id = $1`
	qOwnedOrder    = `SELECT ` + orderColumns + ` FROM orders WHERE id = $1 AND account_id = $2`
	qCancelOrder   = `UPDATE orders SET status = 'cancelled', cancelled_at = $1 WHERE id = $2`
	qCompleteOrder = `UPDATE orders SET complete = true, status = 'completed', completed_at = $1 WHERE id = $2`
	qShipOrder     = `UPDATE orders SET ship_date = $1 WHERE id = $2`
)

// scanOrder reads an order; currency is the shop's, which every order is in.
func (db *DB) scanOrder(row pgx.Row) (petstore.Order, error) {
	var (
		o    petstore.Order
		name *string
	)
	if err := row.Scan(&o.ID, &o.PetID, &o.AccountID, &o.Quantity, &o.ShipDate, &o.Complete, (*string)(&o.Status), &o.CreatedAt,
		&o.CompletedAt, &o.CancelledAt, &o.UnitPrice, &name, &o.CategoryID); err != nil {
		return petstore.Order{}, err
	}
	if name != nil {
		o.PetName = *name
	}
	o.Currency = db.Currency()
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
	return one(ctx, db, "order", func() error { return petstore.NotFound("Order", id) }, db.scanOrder, q, args...)
}

// ordersQuery is the query of one page of the orders that match every filter of f,
// newest (or oldest) first by (created_at, id), as SQLite's is (see there).
func ordersQuery(f petstore.OrderFilter, p petstore.Page) (string, []any) {
	var (
		q    strings.Builder
		args = make([]any, 0, 8)
	)
	arg := func(v any) string {
		args = append(args, v)
		return `$` + strconv.Itoa(len(args))
	}
	q.WriteString(`SELECT ` + orderColumns + ` FROM orders WHERE true`)
	if f.AccountID != 0 {
		q.WriteString(` AND account_id = ` + arg(f.AccountID))
	}
	if f.Status != "" {
		q.WriteString(` AND status = ` + arg(string(f.Status)))
	}
	if f.CreatedAfter != nil {
		q.WriteString(` AND created_at >= ` + arg(*f.CreatedAfter))
	}
	if f.CreatedBefore != nil {
		q.WriteString(` AND created_at < ` + arg(*f.CreatedBefore))
	}
	dir, past := ` DESC`, `<`
	if f.Oldest {
		dir, past = ``, `>`
	}
	if p.After != 0 {
		q.WriteString(` AND (created_at, id) ` + past + ` (SELECT created_at, id FROM orders WHERE id = ` + arg(p.After) + `)`)
	}
	q.WriteString(` ORDER BY created_at` + dir + `, id` + dir + ` LIMIT ` + arg(p.Size()))
	return q.String(), args
}

// Orders lists one page of the orders that match every filter, newest or oldest
// first.
func (db *DB) Orders(ctx context.Context, f petstore.OrderFilter, p petstore.Page) ([]petstore.Order, error) {
	q, args := ordersQuery(f, p)
	return list(ctx, db, "orders", 0, db.scanOrder, q, args...)
}

// lockOrder reads an order and locks its row for the rest of tx, scoped to owner
// when it is not 0. The lock makes two cancellations of one order take turns: the
// second finds it cancelled rather than putting its quantity back a second time.
func (db *DB) lockOrder(ctx context.Context, tx pgx.Tx, id, owner int64) (petstore.Order, error) {
	q, args := orderQuery(id, owner)
	o, err := db.scanOrder(tx.QueryRow(ctx, q+` FOR UPDATE`, args...))
	if noRows(err) {
		return petstore.Order{}, petstore.NotFound("Order", id)
	}
	if err != nil {
		return petstore.Order{}, fmt.Errorf("lock order %d: %w", id, err)
	}
	return o, nil
}

// CancelOrder cancels a placed order, applies CancelOrder to its pet and moves its
// figures to the cancelled ones of the sales summary; a complete order is EConflict,
// a cancelled one is left as it is. With owner != 0 another account's order is
// ENotFound.
// Locks are taken order first, then pet, as in UpdateOrder; PlaceOrder locks only
// the pet, so no two transactions wait on each other in a circle.
//
// It writes order.cancelled, with the order cancelled, and the stock events of the
// units returned.
func (db *DB) CancelOrder(ctx context.Context, id, owner int64) error {
	var pet int64 // the pet whose state it writes, once locked
	err := db.updateWithEvents(ctx, func(tx pgx.Tx) ([]petstore.Event, error) {
		o, err := db.lockOrder(ctx, tx, id, owner)
		if err != nil {
			return nil, err
		}
		if already, err := o.CheckCancel(); err != nil || already {
			return nil, err // before the pet, which a closed order may outlive
		}
		p, cur, err := lockPet(ctx, tx, o.PetID)
		if err != nil {
			return nil, err
		}
		pet = o.PetID
		o, next, events, err := petstore.CancelOrder(o, p, cur, timestamp(db.now()))
		if err != nil {
			return nil, err
		}
		if err := savePetState(ctx, tx, o.PetID, next); err != nil {
			return nil, err
		}
		if _, err = tx.Exec(ctx, qCancelOrder, o.CancelledAt, id); err != nil {
			return nil, err
		}
		if err := addSales(ctx, tx, []petstore.SalesLine{petstore.CancelledSales(o)}); err != nil {
			return nil, err
		}
		return events, nil
	})
	if pet != 0 {
		db.changed(pet)
	}
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
	var (
		o   petstore.Order
		pet int64 // the pet whose state it writes, once locked
	)
	err := db.updateWithEvents(ctx, func(tx pgx.Tx) ([]petstore.Event, error) {
		var err error
		if o, err = db.lockOrder(ctx, tx, id, 0); err != nil {
			return nil, err
		}
		if err := petstore.CheckOrderUpdate(o, petstore.OrderUpdate{Complete: u.Complete, ShipDate: ship}); err != nil || o.Final() {
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
		pet = o.PetID
		done, next, events := petstore.CompleteOrder(o, p, cur, timestamp(db.now()))
		if err := savePetState(ctx, tx, o.PetID, next); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, qCompleteOrder, done.CompletedAt, id); err != nil {
			return nil, err
		}
		o = done
		return events, nil
	})
	if pet != 0 {
		db.changed(pet)
	}
	if err != nil {
		return petstore.Order{}, fmt.Errorf("update order: %w", err)
	}
	return o, nil
}
