package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/acme-pets/petstore/internal/groupcommit"
	"github.com/acme-pets/petstore/internal/petstore"
)

const (
	orderColumns = `id, pet_id, account_id, quantity, ship_date, complete, status, created_at, completed_at, cancelled_at,
		unit_price, pet_name, category_id`
	qOrder       = `SELECT ` + orderColumns + ` FROM orders WHERE id = ?`
	qOwnedOrder  = `SELECT ` + orderColumns + ` FROM orders WHERE id = ? AND account_id = ?`
	qInsertOrder = `INSERT INTO orders (pet_id, account_id, quantity, ship_date, complete, status, created_at, unit_price, pet_name, category_id)
		VALUES (?, ?, ?, ?, 0, 'placed', ?, ?, ?, ?)`
	qCancelOrder   = `UPDATE orders SET status = 'cancelled', cancelled_at = ? WHERE id = ?`
	qCompleteOrder = `UPDATE orders SET complete = 1, status = 'completed', completed_at = ? WHERE id = ?`
	qShipOrder     = `UPDATE orders SET ship_date = ? WHERE id = ?`
	// qAddSales, qAddSalesDay and qAddSalesCategory add a line (petstore.SalesLine) to
	// the sales summary per day, pet and category, and to its rollups per day and per
	// day and category.
	qAddSales = `INSERT INTO sales_daily (day, pet_id, category_id, orders, units, revenue, cancelled_orders, cancelled_units, cancelled_revenue)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (day, pet_id, category_id) DO UPDATE SET ` + addFigures
	qAddSalesDay = `INSERT INTO sales_days (day, orders, units, revenue, cancelled_orders, cancelled_units, cancelled_revenue)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (day) DO UPDATE SET ` + addFigures
	qAddSalesCategory = `INSERT INTO sales_categories (day, category_id, orders, units, revenue, cancelled_orders, cancelled_units, cancelled_revenue)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (day, category_id) DO UPDATE SET ` + addFigures
	addFigures = `orders = orders + excluded.orders, units = units + excluded.units, revenue = revenue + excluded.revenue,
			cancelled_orders = cancelled_orders + excluded.cancelled_orders,
			cancelled_units = cancelled_units + excluded.cancelled_units,
			cancelled_revenue = cancelled_revenue + excluded.cancelled_revenue`
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

// addSales adds lines to the sales summary and its rollups, in the transaction of the
// orders they count.
func addSales(ctx context.Context, db *DB, tx *sql.Tx, lines []petstore.SalesLine) error {
	if len(lines) == 0 {
		return nil
	}
	r := petstore.Rollup(lines)
	for _, w := range []struct {
		q     string
		lines []petstore.SalesLine
		key   func(petstore.SalesLine) []any
	}{
		{qAddSales, lines, func(l petstore.SalesLine) []any { return []any{l.Day, l.PetID, l.CategoryID} }},
		{qAddSalesDay, r.Days, func(l petstore.SalesLine) []any { return []any{l.Day} }},
		{qAddSalesCategory, r.Categories, func(l petstore.SalesLine) []any { return []any{l.Day, l.CategoryID} }},
	} {
		s, err := db.txStmt(ctx, tx, w.q)
		if err != nil {
			return err
		}
		for _, l := range w.lines {
			args := append(w.key(l), l.Orders, l.Units, l.Revenue, l.CancelledOrders, l.CancelledUnits, l.CancelledRevenue)
			if _, err := s.ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("add sales: %w", err)
			}
		}
	}
	return nil
}

// utc returns a copy of t in UTC, as it will read back from the database.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// PlaceOrder places an order in the next batch of the placement loop (see
// placeOrders); it answers once that batch has committed.
func (db *DB) PlaceOrder(ctx context.Context, o petstore.NewOrder) (petstore.PlacedOrder, error) {
	o.ShipDate = utc(o.ShipDate)
	p, err := db.placer.Do(ctx, o)
	if err != nil {
		return p, fmt.Errorf("place order: %w", err)
	}
	return p, nil
}

// PendingOrders is how many orders wait for a batch to take them.
func (db *DB) PendingOrders() int { return db.placer.Pending() }

// placeOrders applies a batch of order requests in one write transaction (the
// groupcommit ApplyFunc; the package says how batches form). A failure is settled by
// groupcommit.Settle, which blames a constraint on one request and tries each alone;
// nothing of a failed batch is written.
func (db *DB) placeOrders(ctx context.Context, reqs []petstore.NewOrder, out []groupcommit.Outcome[petstore.PlacedOrder]) {
	err := db.placeBatch(ctx, reqs, out)
	if err == nil {
		return
	}
	if len(reqs) == 1 && isForeignKey(err) {
		err = petstore.NotFound("Account", reqs[0].AccountID) // deleted under the order
	}
	groupcommit.Settle(ctx, reqs, out, err, isConstraint, db.placeOrders)
}

// placeBatch loads every pet and key that reqs name, lets petstore.PlanOrders decide,
// writes each changed pet once, the placed orders and the keys, and commits; then it
// answers every request in out.
func (db *DB) placeBatch(ctx context.Context, reqs []petstore.NewOrder, out []groupcommit.Outcome[petstore.PlacedOrder]) error {
	var (
		batch  petstore.OrderBatch
		queued bool
	)
	defer func() { db.pets.forget(batch.Changed...) }()
	err := db.update(ctx, func(tx *sql.Tx) error {
		// The write lock is held from here to the commit, and nothing below waits for
		// another lock: statements need no cancellation, which saves modernc a
		// goroutine per statement.
		sctx := context.WithoutCancel(ctx)
		pets := make(map[int64]petstore.PetState, len(reqs))
		rows := make(map[int64]petstore.Pet, len(reqs))
		var keys map[petstore.KeyRef]petstore.IdempotencyRecord
		for _, r := range reqs {
			if _, ok := pets[r.PetID]; !ok {
				p, st, err := loadPetState(sctx, db, tx, r.PetID)
				switch {
				case err == nil:
					pets[r.PetID], rows[r.PetID] = st, p
				case petstore.ErrorCode(err) != petstore.ENotFound:
					return err
				}
			}
			if r.Idempotency == nil {
				continue
			}
			ref := r.Idempotency.Ref()
			if _, ok := keys[ref]; ok {
				continue
			}
			rec, ok, err := loadIdempotencyRecord(sctx, db, tx, ref)
			if err != nil {
				return err
			}
			if ok {
				if keys == nil {
					keys = make(map[petstore.KeyRef]petstore.IdempotencyRecord)
				}
				keys[ref] = rec
			}
		}
		before := maps.Clone(pets)
		batch = petstore.PlanOrders(reqs, pets, rows, keys, db.now().UTC(), db.Currency())
		for _, id := range batch.Changed {
			if err := savePetState(sctx, db, tx, id, batch.Pets[id]); err != nil {
				return err
			}
		}
		ins := tx.StmtContext(sctx, db.writeStmts[qInsertOrder])
		for i := range batch.Plans {
			p := &batch.Plans[i]
			if p.Outcome != petstore.Place {
				continue
			}
			o := &p.Order
			res, err := ins.ExecContext(sctx, o.PetID, o.AccountID, o.Quantity, nullTime(o.ShipDate), formatTime(o.CreatedAt),
				nullInt64(o.UnitPrice), o.PetName, o.CategoryID)
			if err != nil {
				return fmt.Errorf("insert order: %w", err)
			}
			if o.ID, err = res.LastInsertId(); err != nil {
				return fmt.Errorf("insert order: %w", err)
			}
		}
		if err := addSales(sctx, db, tx, batch.Sales()); err != nil {
			return err
		}
		var err error
		if queued, err = db.record(sctx, tx, batch.Events(before, rows)); err != nil {
			return err
		}
		for i, r := range reqs {
			if batch.Plans[i].Record {
				if err := saveIdempotencyRecord(sctx, db, tx, r.Idempotency.Ref(), batch.Record(i)); err != nil {
					return err
				}
			}
		}
		if db.beforeCommit != nil {
			return db.beforeCommit()
		}
		return nil
	})
	if err != nil {
		return err
	}
	db.wakeDispatcher(queued)
	for i := range out {
		out[i].Value, out[i].Err = batch.Answer(i)
	}
	return nil
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
	var (
		pet    int64
		queued bool
	)
	defer func() { db.pets.forget(pet) }()
	err := db.update(ctx, func(tx *sql.Tx) error {
		o, err := db.loadOrder(ctx, tx, id, owner)
		if err != nil {
			return err
		}
		pet = o.PetID
		if already, err := o.CheckCancel(); err != nil || already {
			return err // before the pet, which a closed order may outlive
		}
		p, cur, err := loadPetState(ctx, db, tx, o.PetID)
		if err != nil {
			return err
		}
		o, next, events, err := petstore.CancelOrder(o, p, cur, db.now().UTC())
		if err != nil {
			return err
		}
		if err := savePetState(ctx, db, tx, o.PetID, next); err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, qCancelOrder, nullTime(o.CancelledAt), id); err != nil {
			return err
		}
		if err := addSales(ctx, db, tx, []petstore.SalesLine{petstore.CancelledSales(o)}); err != nil {
			return err
		}
		queued, err = db.record(ctx, tx, events)
		return err
	})
	if err != nil {
		return fmt.Errorf("cancel order: %w", err)
	}
	db.wakeDispatcher(queued)
	return nil
}

// UpdateOrder sets an order's ship date and completes it under PetState.Fulfil.
// Completion is one-way: on a complete order, an update that changes nothing returns
// the order as it is, and any real change is EInvalidTransition. Complete set to
// false on an incomplete order changes nothing.
func (db *DB) UpdateOrder(ctx context.Context, id int64, u petstore.OrderUpdate) (petstore.Order, error) {
	var (
		o      petstore.Order
		queued bool
	)
	defer func() { db.pets.forget(o.PetID) }()
	err := db.update(ctx, func(tx *sql.Tx) error {
		var err error
		if o, err = db.loadOrder(ctx, tx, id, 0); err != nil {
			return err
		}
		if err := petstore.CheckOrderUpdate(o, u); err != nil || o.Final() {
			return err
		}
		if u.ShipDate != nil {
			o.ShipDate = utc(u.ShipDate)
			if _, err := tx.ExecContext(ctx, qShipOrder, nullTime(o.ShipDate), id); err != nil {
				return err
			}
		}
		if u.Complete != nil && *u.Complete {
			p, cur, err := loadPetState(ctx, db, tx, o.PetID)
			if err != nil {
				return err
			}
			var (
				next   petstore.PetState
				events []petstore.Event
			)
			o, next, events = petstore.CompleteOrder(o, p, cur, db.now().UTC())
			if err := savePetState(ctx, db, tx, o.PetID, next); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, qCompleteOrder, nullTime(o.CompletedAt), id); err != nil {
				return err
			}
			queued, err = db.record(ctx, tx, events)
			return err
		}
		return nil
	})
	if err != nil {
		return petstore.Order{}, fmt.Errorf("update order: %w", err)
	}
	db.wakeDispatcher(queued)
	return o, nil
}
