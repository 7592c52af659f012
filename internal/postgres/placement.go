package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/acme-pets/petstore/internal/groupcommit"
	"github.com/acme-pets/petstore/internal/petstore"
)

// Orders are placed in batches (groupcommit): each batch is one transaction of two
// round trips, whatever its size.
//
//  1. BEGIN; lock every pet the batch names, in id order (so that batches of several
//     processes never wait on each other's pets in a cycle; the locks taken after,
//     on Idempotency-Key and sales rows, can still meet one, and placeOrders runs a
//     batch that does, 40P01, again), reading their state; read the records of the
//     batch's Idempotency-Keys; draw an order id per request from the sequence.
//  2. Write each changed pet once, insert the placed orders, record the keys (in key
//     order), write the events (an order.placed per order, the stock events of each
//     changed pet) in one statement, COMMIT. Deliveries are the dispatcher's, later.
//
// petstore.PlanOrders decides in between, in Go. The pets' row locks are held for
// about one round trip, so a popular pet takes as many orders per round trip as
// arrived while the previous batch held it.
const (
	qLockPets = `SELECT id, name, category_id, status, stock, open_orders, held, orders, price, description, tags, photos FROM pets WHERE id = ANY($1) ORDER BY id FOR UPDATE`
	qOrderIDs = `SELECT nextval('orders_id_seq') FROM generate_series(1, $1)`
	qSavePets = `UPDATE pets SET status = v.status, stock = v.stock, open_orders = v.open_orders, held = v.held, orders = v.orders
		FROM unnest($1::bigint[], $2::text[], $3::integer[], $4::integer[], $5::integer[], $6::integer[]) AS v(id, status, stock, open_orders, held, orders)
		WHERE pets.id = v.id`
	qInsertOrders = `INSERT INTO orders (id, pet_id, account_id, quantity, ship_date, created_at, unit_price, pet_name, category_id)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::integer[], $5::timestamptz[], $6::timestamptz[],
			$7::bigint[], $8::text[], $9::bigint[])`
)

// batchRetries is how many times a batch runs again after it lost a key to another
// process (or a deadlock): the next run finds the key's result and replays it.
const batchRetries = 3

// errKeyTaken is a batch's failure to record an Idempotency-Key that another
// transaction recorded first.
var errKeyTaken = errors.New("an idempotency key was recorded by another transaction")

// PlaceOrder places an order in the next batch of the placement loop of its pet
// (pets are spread over Options.Loops loops); it answers once that batch has
// committed.
func (db *DB) PlaceOrder(ctx context.Context, o petstore.NewOrder) (petstore.PlacedOrder, error) {
	o.ShipDate = optionalTimestamp(o.ShipDate)
	q := db.placers[uint64(o.PetID)%uint64(len(db.placers))]
	p, err := q.Do(ctx, o)
	if err != nil {
		return p, fmt.Errorf("place order: %w", err)
	}
	return p, nil
}

// PendingOrders is how many orders wait for a batch to take them.
func (db *DB) PendingOrders() int {
	n := 0
	for _, q := range db.placers {
		n += q.Pending()
	}
	return n
}

// placeOrders applies a batch of order requests in one transaction (the groupcommit
// ApplyFunc; the package says how batches form). A batch that lost an
// Idempotency-Key to another process runs again; any other failure is settled by
// groupcommit.Settle, which blames a constraint on one request and tries each alone.
// Nothing of a failed batch is written.
func (db *DB) placeOrders(ctx context.Context, reqs []petstore.NewOrder, out []groupcommit.Outcome[petstore.PlacedOrder]) {
	var err error
	for attempt := 0; ; attempt++ {
		if err = db.placeBatch(ctx, reqs, out); err == nil {
			return
		}
		if attempt == batchRetries || !errors.Is(err, errKeyTaken) && pgCode(err) != deadlockDetected {
			break
		}
	}
	if len(reqs) == 1 && isForeignKey(err) {
		err = petstore.NotFound("Account", reqs[0].AccountID) // deleted under the order
	}
	groupcommit.Settle(ctx, reqs, out, err, isConstraint, db.placeOrders)
}

// placeBatch runs one batch's transaction (see above) and answers every request in
// out: its first round trip (lockBatch), PlanOrders, its second (queueWrites, then
// commitBatch).
func (db *DB) placeBatch(ctx context.Context, reqs []petstore.NewOrder, out []groupcommit.Outcome[petstore.PlacedOrder]) error {
	pc, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer pc.Release()
	conn := pc.Conn()
	// BEGIN and COMMIT are sent by hand, in the pipelines.
	defer rollbackUnlessIdle(ctx, conn)
	st, err := db.lockBatch(ctx, conn, reqs)
	if err != nil {
		return err
	}
	batch := petstore.PlanOrders(reqs, st.pets, st.catalog, st.records, timestamp(db.now()), db.Currency())
	defer func() { db.changed(batch.Changed...) }()
	w, err := queueWrites(ctx, reqs, &batch, st)
	if err != nil {
		return err
	}
	wanted, err := db.commitBatch(ctx, conn, w)
	if err != nil {
		return err
	}
	for i := range out {
		out[i].Value, out[i].Err = batch.Answer(i)
	}
	if w.events {
		db.feedWritten()
	}
	if wanted {
		db.wake()
	}
	return nil
}

// rollbackUnlessIdle ends a transaction that a batch left open: whatever ends
// placeBatch before the commit (an error, a panic) rolls back here. A connection still
// in a transaction after that is not returned to the pool but closed (pgxpool checks),
// which also rolls back.
func rollbackUnlessIdle(ctx context.Context, conn *pgx.Conn) {
	if conn.PgConn().TxStatus() == 'I' {
		return
	}
	// Briefly: a connection that cannot even roll back is closed by the pool (it is
	// still in a transaction), which rolls back too.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	conn.Exec(rctx, "ROLLBACK")
}

// batchState is what a batch reads before PlanOrders decides: the pets it names and
// the records of its keys (and here, an order id per request).
type batchState struct {
	pets    map[int64]petstore.PetState // as locked; PlanOrders changes them in place
	before  map[int64]petstore.PetState // as locked, for the events
	catalog map[int64]petstore.Pet      // as locked, for PlanOrders and the events
	records map[petstore.KeyRef]petstore.IdempotencyRecord
	ids     []int64
}

// lockBatch is a batch's first round trip: BEGIN, lock and read the pets, read the
// keys' records, draw the order ids.
func (db *DB) lockBatch(ctx context.Context, conn *pgx.Conn, reqs []petstore.NewOrder) (batchState, error) {
	petIDs := make([]int64, 0, len(reqs))
	var accounts []int64
	var keys []string
	for _, r := range reqs {
		petIDs = append(petIDs, r.PetID)
		if r.Idempotency != nil {
			ref := r.Idempotency.Ref()
			accounts, keys = append(accounts, ref.AccountID), append(keys, ref.Key)
		}
	}
	slices.Sort(petIDs)
	petIDs = slices.Compact(petIDs)
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(qLockPets, petIDs)
	if len(keys) > 0 {
		b.Queue(qIdempotencyRecords, accounts, keys)
	}
	b.Queue(qOrderIDs, len(reqs))
	st := batchState{
		pets:    make(map[int64]petstore.PetState, len(petIDs)),
		before:  make(map[int64]petstore.PetState, len(petIDs)),
		catalog: make(map[int64]petstore.Pet, len(petIDs)),
		ids:     make([]int64, 0, len(reqs)),
	}
	// A query's error is its rows' too (rows.Err).
	err := readBatch(conn.SendBatch(ctx, b), func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		rows, _ := br.Query()
		if err := st.scanPets(rows); err != nil {
			return err
		}
		if len(keys) > 0 {
			rows, _ := br.Query()
			if err := st.scanRecords(rows, db.Currency()); err != nil {
				return err
			}
		}
		rows, _ = br.Query()
		return st.scanOrderIDs(rows)
	})
	return st, err
}

// scanPets reads the rows of qLockPets.
func (st *batchState) scanPets(rows pgx.Rows) error {
	for rows.Next() {
		var (
			p      petstore.Pet
			s      petstore.PetState
			status string
			photos string
		)
		if err := rows.Scan(&p.ID, &p.Name, &p.CategoryID, &status, &s.Stock, &s.OpenOrders, &s.Held, &s.Orders, &p.Price, &p.Description, &p.Tags, &photos); err != nil {
			return fmt.Errorf("lock pets: %w", err)
		}
		var err error
		if p.Photos, err = petstore.UnmarshalPhotos(photos); err != nil {
			return fmt.Errorf("lock pets: %w", err)
		}
		s.Status = petstore.PetStatus(status)
		p.Status, p.Stock = s.Status, s.Stock
		st.pets[p.ID], st.catalog[p.ID], st.before[p.ID] = s, p, s
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("lock pets: %w", err)
	}
	return nil
}

// scanRecords reads the rows of qIdempotencyRecords; their orders are in currency,
// the shop's, which every order is in.
func (st *batchState) scanRecords(rows pgx.Rows, currency string) error {
	for rows.Next() {
		ref, rec, err := scanIdempotencyRecord(rows)
		if err != nil {
			return err
		}
		if st.records == nil {
			st.records = make(map[petstore.KeyRef]petstore.IdempotencyRecord)
		}
		if rec.Order != nil {
			rec.Order.Currency = currency
		}
		st.records[ref] = rec
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read idempotency keys: %w", err)
	}
	return nil
}

// scanOrderIDs reads the rows of qOrderIDs.
func (st *batchState) scanOrderIDs(rows pgx.Rows) error {
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("draw order ids: %w", err)
		}
		st.ids = append(st.ids, id)
	}
	return rows.Err()
}

// batchWrites are a batch's second round trip but its COMMIT: its writes, in order.
type batchWrites struct {
	pgx.Batch
	// events tells that the last write is the events' (qInsertEvents), whose command
	// tag says whether an endpoint may want them.
	events bool
	// orders are the ids of the orders placed, to look for when the outcome of the
	// COMMIT is unknown.
	orders []int64
}

// queueWrites queues what PlanOrders decided: each changed pet once, the placed
// orders and their sales, the keys (in key order), and the events, last, which keep
// the trace of ctx's span (the batch's).
func queueWrites(ctx context.Context, reqs []petstore.NewOrder, batch *petstore.OrderBatch, st batchState) (*batchWrites, error) {
	w := &batchWrites{}
	queuePets(&w.Batch, batch)
	w.orders = queueOrders(&w.Batch, batch, st.ids)
	if err := queueKeys(&w.Batch, reqs, batch, st.records); err != nil {
		return nil, err
	}
	// The events go last, so that their result is the last of the writes.
	if events := batch.Events(st.before, st.catalog); len(events) > 0 {
		args, err := eventArgs(ctx, events)
		if err != nil {
			return nil, err
		}
		w.Queue(qInsertEvents, args...)
		w.events = true
	}
	return w, nil
}

// queuePets writes each pet the batch changed, in one statement.
func queuePets(w *pgx.Batch, batch *petstore.OrderBatch) {
	n := len(batch.Changed)
	if n == 0 {
		return
	}
	statuses, stocks, open, held, orders := make([]string, n), make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	for i, id := range batch.Changed {
		st := batch.Pets[id]
		statuses[i], stocks[i], open[i], held[i], orders[i] = string(st.Status), int32(st.Stock), int32(st.OpenOrders), int32(st.Held), int32(st.Orders)
	}
	w.Queue(qSavePets, batch.Changed, statuses, stocks, open, held, orders)
}

// queueOrders gives the placed orders their ids (ids[i] is request i's) and inserts
// them, with their sales; it returns their ids.
func queueOrders(w *pgx.Batch, batch *petstore.OrderBatch, ids []int64) []int64 {
	var o orderRows
	for i := range batch.Plans {
		if p := &batch.Plans[i]; p.Outcome == petstore.Place {
			p.Order.ID = ids[i]
			o.add(p.Order)
		}
	}
	if len(o.ids) > 0 {
		w.Queue(qInsertOrders, o.ids, o.pets, o.accounts, o.qty, o.ships, o.created, o.prices, o.names, o.categories)
		queueSales(w, batch.Sales())
	}
	return o.ids
}

// queueKeys records the keys whose result the batch records, in key order, so that
// two batches recording the same keys wait for each other in one order only. A key
// used afresh after a day replaces its old record, if no one else replaced it.
func queueKeys(w *pgx.Batch, reqs []petstore.NewOrder, batch *petstore.OrderBatch, records map[petstore.KeyRef]petstore.IdempotencyRecord) error {
	var recorded []int
	for i := range batch.Plans {
		if batch.Plans[i].Record {
			recorded = append(recorded, i)
		}
	}
	slices.SortFunc(recorded, func(i, j int) int {
		a, b := reqs[i].Idempotency.Ref(), reqs[j].Idempotency.Ref()
		return cmp.Or(cmp.Compare(a.AccountID, b.AccountID), strings.Compare(a.Key, b.Key))
	})
	var expired, fresh keyRows
	for _, i := range recorded {
		ref := reqs[i].Idempotency.Ref()
		if old, ok := records[ref]; ok {
			expired.accounts = append(expired.accounts, ref.AccountID)
			expired.keys = append(expired.keys, ref.Key)
			expired.created = append(expired.created, old.CreatedAt)
		}
		if err := fresh.add(ref, batch.Record(i)); err != nil {
			return err
		}
	}
	if len(expired.keys) > 0 {
		w.Queue(qDeleteExpiredKeys, expired.accounts, expired.keys, expired.created)
	}
	if len(fresh.keys) > 0 {
		fresh.queue(w)
	}
	return nil
}

// commitBatch sends the writes and the COMMIT (db.commit, sendWrites but in tests)
// and reports whether the commit made deliveries due. The writes and the commit get a
// budget of their own: the batch's may be nearly spent by waiting for the pets'
// locks, and a commit cut short is one whose outcome nobody knows.
func (db *DB) commitBatch(ctx context.Context, conn *pgx.Conn, w *batchWrites) (wanted bool, err error) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	last, err := db.commit(wctx, conn, &w.Batch)
	wanted = w.events && last.RowsAffected() > 0
	if err != nil && outcomeUnknown(err) {
		// The connection failed after the COMMIT may have reached the server: look.
		if ok, verr := db.ordersExist(w.orders); verr != nil || !ok {
			return false, err
		}
		err = nil
	}
	return wanted, err
}

// sendWrites is a batch's second round trip: its writes and COMMIT, in one pipeline.
// It returns the last write's command tag.
func sendWrites(ctx context.Context, conn *pgx.Conn, w *pgx.Batch) (last pgconn.CommandTag, err error) {
	n := w.Len()
	w.Queue("COMMIT")
	err = readBatch(conn.SendBatch(ctx, w), func(br pgx.BatchResults) error {
		if last, err = readWrites(br, n); err != nil {
			return err
		}
		return committed(br.Exec())
	})
	return last, err
}

// readWrites reads the results of a batch's n writes and returns the last one's tag.
func readWrites(br pgx.BatchResults, n int) (pgconn.CommandTag, error) {
	var last pgconn.CommandTag
	for range n {
		tag, err := br.Exec()
		if err != nil {
			return pgconn.CommandTag{}, writeError(err)
		}
		last = tag
	}
	return last, nil
}

// commitTimeout bounds the second round trip of a batch, the writes and the commit.
const commitTimeout = 5 * time.Second

// errRolledBack is a COMMIT that PostgreSQL answered with ROLLBACK.
var errRolledBack = errors.New("commit: the transaction was rolled back")

// outcomeUnknown reports whether a batch that failed with err may have committed all
// the same: the server's answer to the COMMIT was lost. An error from the server
// itself (a failed write, a COMMIT answered with ROLLBACK) means it did not.
func outcomeUnknown(err error) bool {
	var pe *pgconn.PgError
	return !errors.As(err, &pe) && !errors.Is(err, errRolledBack) && !errors.Is(err, errKeyTaken)
}

// ordersExist reports whether all of these orders were committed, on a connection
// of its own. With no orders there is nothing to tell by, and the batch counts as
// failed: its refusals are answered again the same way on a retry.
func (db *DB) ordersExist(ids []int64) (bool, error) {
	if len(ids) == 0 {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM orders WHERE id = ANY($1)`, ids).Scan(&n); err != nil {
		return false, err
	}
	return n == len(ids), nil
}

// writeError names a write that failed because another transaction recorded one of
// the batch's keys first.
func writeError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == uniqueViolation && pe.ConstraintName == keyConstraint {
		return fmt.Errorf("%w: %w", errKeyTaken, err)
	}
	return err
}

// readBatch reads the results of a pipeline with read and closes it.
func readBatch(br pgx.BatchResults, read func(pgx.BatchResults) error) error {
	err := read(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// orderRows are the columns of the orders a batch places, for qInsertOrders.
type orderRows struct {
	ids, pets, accounts []int64
	qty                 []int32
	ships               []*time.Time
	created             []time.Time
	prices              []*int64
	names               []string
	categories          []int64
}

func (r *orderRows) add(o petstore.Order) {
	r.ids = append(r.ids, o.ID)
	r.pets = append(r.pets, o.PetID)
	r.accounts = append(r.accounts, o.AccountID)
	r.qty = append(r.qty, int32(o.Quantity))
	r.ships = append(r.ships, o.ShipDate)
	r.created = append(r.created, o.CreatedAt)
	r.prices = append(r.prices, o.UnitPrice)
	r.names = append(r.names, o.PetName)
	r.categories = append(r.categories, o.CategoryID)
}

// committed checks the result of a COMMIT sent by hand: PostgreSQL answers a COMMIT
// of a failed transaction with ROLLBACK, not with an error.
func committed(tag pgconn.CommandTag, err error) error {
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if tag.String() != "COMMIT" {
		return errRolledBack
	}
	return nil
}
