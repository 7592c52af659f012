package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"

	"github.com/acme-pets/petstore/internal/groupcommit"
	"github.com/acme-pets/petstore/internal/petstore"
)

// Orders are placed in batches (groupcommit): each batch is one write transaction,
// whatever its size. It loads every pet and key record the batch names (loadBatch),
// lets petstore.PlanOrders decide, and writes each changed pet once, the placed
// orders, their sales, the keys and the events (writeBatch). The single writer
// serializes batches: no row is locked, and no batch waits for another's lock once it
// has the writer.

// insertOrder writes a batch's placed orders (multirow.go). RETURNING gives each row's
// id (see insertOrders for which is which).
var insertOrder = newMultiInsert(`INSERT INTO orders (pet_id, account_id, quantity, ship_date, complete, status, created_at, unit_price, pet_name, category_id)
		VALUES `, `(?, ?, ?, ?, 0, 'placed', ?, ?, ?, ?)`, ` RETURNING id`)

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

// placeBatch runs one batch's transaction (see above) and answers every request in
// out: loadBatch, PlanOrders, writeBatch, and the commit.
func (db *DB) placeBatch(ctx context.Context, reqs []petstore.NewOrder, out []groupcommit.Outcome[petstore.PlacedOrder]) error {
	var (
		batch  petstore.OrderBatch
		wanted bool
	)
	defer func() { db.pets.Forget(batch.Changed...) }()
	err := db.update(ctx, func(tx *sql.Tx) error {
		// The write lock is held from here to the commit, and nothing below waits for
		// another lock: statements need no cancellation, which saves modernc a
		// goroutine per statement.
		sctx := context.WithoutCancel(ctx)
		st, err := loadBatch(sctx, db, tx, reqs)
		if err != nil {
			return err
		}
		batch = petstore.PlanOrders(reqs, st.pets, st.catalog, st.records, db.now().UTC(), db.Currency())
		if wanted, err = db.writeBatch(sctx, tx, reqs, &batch, st); err != nil {
			return err
		}
		return db.beforeCommit()
	})
	if err != nil {
		return err
	}
	db.feedWritten() // a batch that commits places orders: order.placed
	if wanted {
		db.wake()
	}
	for i := range out {
		out[i].Value, out[i].Err = batch.Answer(i)
	}
	return nil
}

// batchState is what a batch reads before PlanOrders decides: the pets it names and
// the records of its keys.
type batchState struct {
	pets    map[int64]petstore.PetState // as loaded; PlanOrders changes them in place
	before  map[int64]petstore.PetState // as loaded, for the events
	catalog map[int64]petstore.Pet      // as loaded, for PlanOrders and the events
	records map[petstore.KeyRef]petstore.IdempotencyRecord
}

// loadBatch reads every pet and key record that reqs name, each once. An unknown pet
// is left out: PlanOrders refuses its orders.
func loadBatch(ctx context.Context, db *DB, tx *sql.Tx, reqs []petstore.NewOrder) (batchState, error) {
	st := batchState{
		pets:    make(map[int64]petstore.PetState, len(reqs)),
		catalog: make(map[int64]petstore.Pet, len(reqs)),
	}
	for _, r := range reqs {
		if _, ok := st.pets[r.PetID]; !ok {
			p, s, err := loadPetState(ctx, db, tx, r.PetID)
			switch {
			case err == nil:
				st.pets[r.PetID], st.catalog[r.PetID] = s, p
			case petstore.ErrorCode(err) != petstore.ENotFound:
				return st, err
			}
		}
		if r.Idempotency != nil {
			if err := st.loadRecord(ctx, db, tx, r.Idempotency.Ref()); err != nil {
				return st, err
			}
		}
	}
	st.before = maps.Clone(st.pets)
	return st, nil
}

// loadRecord reads the record of a key, unless the batch has it already.
func (st *batchState) loadRecord(ctx context.Context, db *DB, tx *sql.Tx, ref petstore.KeyRef) error {
	if _, ok := st.records[ref]; ok {
		return nil
	}
	rec, ok, err := loadIdempotencyRecord(ctx, db, tx, ref)
	if err != nil || !ok {
		return err
	}
	if st.records == nil {
		st.records = make(map[petstore.KeyRef]petstore.IdempotencyRecord)
	}
	st.records[ref] = rec
	return nil
}

// writeBatch writes what PlanOrders decided: each changed pet once, the placed
// orders and their sales, the keys, and the events. It reports whether an enabled
// endpoint may want the events.
func (db *DB) writeBatch(ctx context.Context, tx *sql.Tx, reqs []petstore.NewOrder, batch *petstore.OrderBatch, st batchState) (wanted bool, err error) {
	for _, id := range batch.Changed {
		if err := savePetState(ctx, db, tx, id, batch.Pets[id]); err != nil {
			return false, err
		}
	}
	if err := insertOrders(ctx, db, tx, batch); err != nil {
		return false, err
	}
	if err := addSales(ctx, db, tx, batch.Sales()); err != nil {
		return false, err
	}
	if err := saveKeys(ctx, db, tx, reqs, batch); err != nil {
		return false, err
	}
	return db.writeEvents(ctx, tx, batch.Events(st.before, st.catalog))
}

// insertOrders inserts the placed orders, a chunk of rows per statement, and gives
// them their ids. SQLite leaves the order of RETURNING's rows unspecified, but inserts
// the rows of a VALUES list in their order, and AUTOINCREMENT gives each row an id
// above every id before it: the k-th smallest id returned is the k-th row's.
func insertOrders(ctx context.Context, db *DB, tx *sql.Tx, batch *petstore.OrderBatch) error {
	placed := make([]*petstore.Order, 0, len(batch.Plans))
	for i := range batch.Plans {
		if p := &batch.Plans[i]; p.Outcome == petstore.Place {
			placed = append(placed, &p.Order)
		}
	}
	if len(placed) == 0 {
		return nil
	}
	// PlanOrders dates a batch's orders batch.Now: formatted once.
	now := formatTime(batch.Now)
	args := make([]any, 0, insertOrder.width*chunk(len(placed)))
	ids := make([]int64, 0, chunk(len(placed)))
	return eachChunk(placed, func(n int, part []*petstore.Order) error {
		args, ids = args[:0], ids[:0]
		for _, o := range part {
			created := now
			if !o.CreatedAt.Equal(batch.Now) {
				created = formatTime(o.CreatedAt)
			}
			args = append(args, o.PetID, o.AccountID, o.Quantity, nullTime(o.ShipDate), created,
				nullInt64(o.UnitPrice), o.PetName, o.CategoryID)
		}
		var err error
		if ids, err = queryIDs(ctx, tx.StmtContext(ctx, db.writeStmts[insertOrder.queries[n]]), args, ids); err != nil {
			return fmt.Errorf("insert orders: %w", err)
		}
		if len(ids) != n {
			return fmt.Errorf("insert orders: %d ids for %d orders", len(ids), n)
		}
		slices.Sort(ids)
		for i, o := range part {
			o.ID = ids[i]
		}
		return nil
	})
}

// queryIDs runs s, an INSERT … RETURNING id, and appends the ids to ids.
func queryIDs(ctx context.Context, s *sql.Stmt, args []any, ids []int64) ([]int64, error) {
	rows, err := s.QueryContext(ctx, args...)
	if err != nil {
		return ids, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return ids, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// saveKeys records the keys whose result the batch records.
func saveKeys(ctx context.Context, db *DB, tx *sql.Tx, reqs []petstore.NewOrder, batch *petstore.OrderBatch) error {
	for i, r := range reqs {
		if batch.Plans[i].Record {
			if err := saveIdempotencyRecord(ctx, db, tx, r.Idempotency.Ref(), batch.Record(i)); err != nil {
				return err
			}
		}
	}
	return nil
}
