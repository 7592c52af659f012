package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

const (
	orderColumns = `id, pet_id, account_id, quantity, ship_date, complete, status, created_at, completed_at, cancelled_at,
		unit_price, pet_name, category_id`
	qOrder         = `SELECT ` + orderColumns + ` FROM orders WHERE id = ?`
	qOwnedOrder    = `SELECT ` + orderColumns + ` FROM orders WHERE id = ? AND account_id = ?`
	qCancelOrder   = `UPDATE orders SET status = 'cancelled', cancelled_at = ? WHERE id = ?`
	qCompleteOrder = `UPDATE orders SET complete = 1, status = 'completed', completed_at = ? WHERE id = ?`
	qShipOrder     = `UPDATE orders SET ship_date = ? WHERE id = ?`
)

// scanOrder reads an order; currency is the shop's, which every order is in.
func (db *DB) scanOrder(row scanner) (petstore.Order, error) {
	var (
		o                          petstore.Order
		ship, completed, cancelled sql.NullString
		created                    string
		price                      sql.NullInt64
		name                       sql.NullString
		err                        error
	)
	if err := row.Scan(&o.ID, &o.PetID, &o.AccountID, &o.Quantity, &ship, &o.Complete, (*string)(&o.Status), &created,
		&completed, &cancelled, &price, &name, &o.CategoryID); err != nil {
		return petstore.Order{}, err
	}
	if o.ShipDate, err = parseNullTime(ship); err != nil {
		return petstore.Order{}, err
	}
	if o.CreatedAt, err = parseTime(created); err != nil {
		return petstore.Order{}, err
	}
	if o.CompletedAt, err = parseNullTime(completed); err != nil {
		return petstore.Order{}, err
	}
	if o.CancelledAt, err = parseNullTime(cancelled); err != nil {
		return petstore.Order{}, err
	}
	o.UnitPrice, o.PetName, o.Currency = nullInt(price), name.String, db.Currency()
	return o, nil
}

// utc returns a copy of t in UTC, as it will read back from the database.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Order finds an order; with owner != 0, only among that account's orders, so that
// another account's order is not found (its existence is not revealed).
func (db *DB) Order(ctx context.Context, id, owner int64) (petstore.Order, error) {
	q, args := qOrder, []any{id}
	if owner != 0 {
		q, args = qOwnedOrder, []any{id, owner}
	}
	return one(ctx, db, "order", func() error { return petstore.NotFound("Order", id) }, db.scanOrder, q, args...)
}

// ordersQuery is the query of one page of the orders that match every filter of f,
// newest (or oldest) first by (created_at, id). The page after order p.After starts
// past that order's place, read by its id; an index leads with the account or the
// status when f names one, and created_at then serves the range and the order.
func ordersQuery(f petstore.OrderFilter, p petstore.Page) (string, []any) {
	var (
		q    strings.Builder
		args = make([]any, 0, 8)
	)
	q.WriteString(`SELECT ` + orderColumns + ` FROM orders WHERE 1`)
	if f.AccountID != 0 {
		q.WriteString(` AND account_id = ?`)
		args = append(args, f.AccountID)
	}
	if f.Status != "" {
		q.WriteString(` AND status = ?`)
		args = append(args, string(f.Status))
	}
	if f.CreatedAfter != nil {
		q.WriteString(` AND created_at >= ?`)
		args = append(args, formatTime(*f.CreatedAfter))
	}
	if f.CreatedBefore != nil {
		q.WriteString(` AND created_at < ?`)
		args = append(args, formatTime(*f.CreatedBefore))
	}
	dir, past := ` DESC`, `<`
	if f.Oldest {
		dir, past = ``, `>`
	}
	if p.After != 0 {
		q.WriteString(` AND (created_at, id) ` + past + ` (SELECT created_at, id FROM orders WHERE id = ?)`)
		args = append(args, p.After)
	}
	q.WriteString(` ORDER BY created_at` + dir + `, id` + dir + ` LIMIT ?`)
	return q.String(), append(args, p.Size())
}

// Orders lists one page of the orders that match every filter, newest or oldest
// first.
func (db *DB) Orders(ctx context.Context, f petstore.OrderFilter, p petstore.Page) ([]petstore.Order, error) {
	q, args := ordersQuery(f, p)
	return list(ctx, db, "orders", 0, db.scanOrder, q, args...)
}

// loadOrder reads an order inside a write transaction, scoped to owner when it is not 0.
func (db *DB) loadOrder(ctx context.Context, tx *sql.Tx, id, owner int64) (petstore.Order, error) {
	var row *sql.Row
	if owner != 0 {
		row = tx.QueryRowContext(ctx, qOwnedOrder, id, owner)
	} else {
		row = tx.QueryRowContext(ctx, qOrder, id)
	}
	o, err := db.scanOrder(row)
	if errors.Is(err, sql.ErrNoRows) {
		return petstore.Order{}, petstore.NotFound("Order", id)
	}
	if err != nil {
		return petstore.Order{}, fmt.Errorf("load order %d: %w", id, err)
	}
	return o, nil
}

// CancelOrder cancels a placed order, applies CancelOrder to its pet and moves its
// figures to the cancelled ones of the sales summary; a complete order is EConflict,
// a cancelled one is left as it is. With owner != 0 another account's order is
// ENotFound.
func (db *DB) CancelOrder(ctx context.Context, id, owner int64) error {
	var pet int64
	defer func() { db.pets.Forget(pet) }()
	err := db.updateWithEvents(ctx, func(tx *sql.Tx) ([]petstore.Event, error) {
		o, err := db.loadOrder(ctx, tx, id, owner)
		if err != nil {
			return nil, err
		}
		pet = o.PetID
		if already, err := o.CheckCancel(); err != nil || already {
			return nil, err // before the pet, which a closed order may outlive
		}
		p, cur, err := loadPetState(ctx, db, tx, o.PetID)
		if err != nil {
			return nil, err
		}
		o, next, events, err := petstore.CancelOrder(o, p, cur, db.now().UTC())
		if err != nil {
			return nil, err
		}
		if err := savePetState(ctx, db, tx, o.PetID, next); err != nil {
			return nil, err
		}
		if _, err = tx.ExecContext(ctx, qCancelOrder, nullTime(o.CancelledAt), id); err != nil {
			return nil, err
		}
		if err := addSales(ctx, db, tx, []petstore.SalesLine{petstore.CancelledSales(o)}); err != nil {
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
// false on an incomplete order changes nothing.
func (db *DB) UpdateOrder(ctx context.Context, id int64, u petstore.OrderUpdate) (petstore.Order, error) {
	var o petstore.Order
	defer func() { db.pets.Forget(o.PetID) }()
	err := db.updateWithEvents(ctx, func(tx *sql.Tx) ([]petstore.Event, error) {
		var err error
		if o, err = db.loadOrder(ctx, tx, id, 0); err != nil {
			return nil, err
		}
		if err := petstore.CheckOrderUpdate(o, u); err != nil || o.Final() {
			return nil, err
		}
		if u.ShipDate != nil {
			o.ShipDate = utc(u.ShipDate)
			if _, err := tx.ExecContext(ctx, qShipOrder, nullTime(o.ShipDate), id); err != nil {
				return nil, err
			}
		}
		if u.Complete == nil || !*u.Complete {
			return nil, nil
		}
		p, cur, err := loadPetState(ctx, db, tx, o.PetID)
		if err != nil {
			return nil, err
		}
		done, next, events := petstore.CompleteOrder(o, p, cur, db.now().UTC())
		if err := savePetState(ctx, db, tx, o.PetID, next); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, qCompleteOrder, nullTime(done.CompletedAt), id); err != nil {
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
