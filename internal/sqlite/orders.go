package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/acme-pets/petstore/internal/groupcommit"
	"github.com/acme-pets/petstore/internal/petstore"
)

const (
	orderColumns   = `id, pet_id, account_id, quantity, ship_date, complete, created_at`
	qOrder         = `SELECT ` + orderColumns + ` FROM orders WHERE id = ?`
	qOwnedOrder    = `SELECT ` + orderColumns + ` FROM orders WHERE id = ? AND account_id = ?`
	qInsertOrder   = `INSERT INTO orders (pet_id, account_id, quantity, ship_date, complete, created_at) VALUES (?, ?, ?, ?, 0, ?)`
	qDeleteOrder   = `DELETE FROM orders WHERE id = ?`
	qCompleteOrder = `UPDATE orders SET complete = 1 WHERE id = ?`
	qShipOrder     = `UPDATE orders SET ship_date = ? WHERE id = ?`
)

func scanOrder(row scanner) (petstore.Order, error) {
	var (
		o       petstore.Order
		ship    sql.NullString
		created string
		err     error
	)
	if err := row.Scan(&o.ID, &o.PetID, &o.AccountID, &o.Quantity, &ship, &o.Complete, &created); err != nil {
		return petstore.Order{}, err
	}
	if o.ShipDate, err = parseNullTime(ship); err != nil {
		return petstore.Order{}, err
	}
	if o.CreatedAt, err = parseTime(created); err != nil {
		return petstore.Order{}, err
	}
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
		batch = petstore.PlanOrders(reqs, pets, keys, db.now().UTC())
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
			res, err := ins.ExecContext(sctx, o.PetID, o.AccountID, o.Quantity, nullTime(o.ShipDate), formatTime(o.CreatedAt))
			if err != nil {
				return fmt.Errorf("insert order: %w", err)
			}
			if o.ID, err = res.LastInsertId(); err != nil {
				return fmt.Errorf("insert order: %w", err)
			}
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
	return one(ctx, db, "order", func() error { return petstore.NotFound("Order", id) }, scanOrder, q, args...)
}

// ordersQuery is the query of one page of the orders that match every filter of f.
func ordersQuery(f petstore.OrderFilter, p petstore.Page) (string, []any) {
	q := `SELECT ` + orderColumns + ` FROM orders WHERE id > ?`
	args := []any{p.After}
	if f.AccountID != 0 {
		q += ` AND account_id = ?`
		args = append(args, f.AccountID)
	}
	if f.Complete != nil {
		q += ` AND complete = ?`
		args = append(args, *f.Complete)
	}
	q += ` ORDER BY id LIMIT ?`
	return q, append(args, p.Size())
}

// Orders lists one page of the orders that match every filter, by id.
func (db *DB) Orders(ctx context.Context, f petstore.OrderFilter, p petstore.Page) ([]petstore.Order, error) {
	q, args := ordersQuery(f, p)
	return list(ctx, db, "orders", 0, scanOrder, q, args...)
}

// loadOrder reads an order inside a write transaction, scoped to owner when it is not 0.
func loadOrder(ctx context.Context, tx *sql.Tx, id, owner int64) (petstore.Order, error) {
	var row *sql.Row
	if owner != 0 {
		row = tx.QueryRowContext(ctx, qOwnedOrder, id, owner)
	} else {
		row = tx.QueryRowContext(ctx, qOrder, id)
	}
	o, err := scanOrder(row)
	if errors.Is(err, sql.ErrNoRows) {
		return petstore.Order{}, petstore.NotFound("Order", id)
	}
	if err != nil {
		return petstore.Order{}, fmt.Errorf("load order %d: %w", id, err)
	}
	return o, nil
}

// CancelOrder removes an incomplete order and applies CancelOrder to its pet; a
// complete order is EConflict. With owner != 0 another account's order is ENotFound.
func (db *DB) CancelOrder(ctx context.Context, id, owner int64) error {
	var (
		pet    int64
		queued bool
	)
	defer func() { db.pets.forget(pet) }()
	err := db.update(ctx, func(tx *sql.Tx) error {
		o, err := loadOrder(ctx, tx, id, owner)
		if err != nil {
			return err
		}
		pet = o.PetID
		if err := o.CanCancel(); err != nil {
			return err // before the pet, which a complete order outlives
		}
		p, cur, err := loadPetState(ctx, db, tx, o.PetID)
		if err != nil {
			return err
		}
		next, events, err := petstore.CancelOrder(o, p, cur, db.now().UTC())
		if err != nil {
			return err
		}
		if err := savePetState(ctx, db, tx, o.PetID, next); err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, qDeleteOrder, id); err != nil {
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
		if o, err = loadOrder(ctx, tx, id, 0); err != nil {
			return err
		}
		if err := petstore.CheckOrderUpdate(o, u); err != nil || o.Complete {
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
			if _, err := tx.ExecContext(ctx, qCompleteOrder, id); err != nil {
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
