package postgres

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/acme-pets/petstore/internal/petstore"
)

// MigrateUpToForTest applies the migrations up to version only, to make a database as
// an older release left it.
func MigrateUpToForTest(ctx context.Context, url string, version int64) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, fsys, goose.WithGoMigrations(goMigrations()...))
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}

// HoldEventsForTest writes events in a transaction of their own, closes written, and
// commits only once release is closed: a change in flight, for the feed's tests.
func (db *DB) HoldEventsForTest(ctx context.Context, events []petstore.Event, written chan<- struct{}, release <-chan struct{}) error {
	return db.updateWithEvents(ctx, func(tx pgx.Tx) ([]petstore.Event, error) {
		args, err := eventArgs(ctx, events)
		if err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, qInsertEvents, args...); err != nil {
			return nil, err
		}
		close(written)
		<-release
		return nil, nil
	})
}

// SetBeforeCommitForTest makes every batch of orders run hook between its writes
// and its COMMIT, which then goes on its own rather than in the writes' pipeline:
// the batch holds its locks and its writes, uncommitted, while hook runs, and an
// error from hook fails the batch as a failed commit would (it is rolled back).
func SetBeforeCommitForTest(db *DB, hook func() error) {
	db.commit = func(ctx context.Context, conn *pgx.Conn, w *pgx.Batch) (last pgconn.CommandTag, err error) {
		if n := w.Len(); n > 0 {
			err = readBatch(conn.SendBatch(ctx, w), func(br pgx.BatchResults) error {
				last, err = readWrites(br, n)
				return err
			})
		}
		if err == nil {
			err = hook()
		}
		if err == nil {
			err = committed(conn.Exec(ctx, "COMMIT"))
		}
		return last, err
	}
}

// SetPurgeChunkForTest makes purges delete n rows at a time and report each full
// chunk to purged.
func SetPurgeChunkForTest(db *DB, n int, purged func(int64)) {
	if n > 0 {
		db.purgeChunk = n
	}
	if purged != nil {
		db.purged = purged
	}
}

// AnalyzeForTest gathers the planner's statistics and empties the GIN indexes'
// pending lists, as autovacuum would after a load.
func (db *DB) AnalyzeForTest(ctx context.Context) error {
	_, err := db.pool.Exec(ctx, `VACUUM ANALYZE`)
	return err
}

// The store's list queries, for the plan test.
var (
	PetsQueryForTest   = petsQuery
	OrdersQueryForTest = ordersQuery
	EventsQueryForTest = eventsQuery
	AccountsForTest    = accountsQuery
)

const (
	PetColumnsForTest    = petColumns
	CategoriesForTest    = qCategories
	APIKeysForTest       = qAPIKeys
	LiveKeysForTest      = qLiveKeys
	EnabledAdminsForTest = qLockEnabledAdmins
	WebhooksForTest      = qWebhooks
	DeliveriesForTest    = qDeliveryRows
	DueRetriesForTest    = qDueRetries
	UnsentForTest        = qUnsent

	SalesTotalsForTest     = qSalesTotals
	SalesByDayForTest      = qSalesByDay
	SalesByPetForTest      = qSalesByPet
	SalesByCategoryForTest = qSalesByCategory
)

// SpanQueryForTest is spanQuery: the deliveries an endpoint's spans tell of.
func SpanQueryForTest(id int64, list []petstore.Span, after int64, limit int) (string, []any) {
	return spanQuery(id, list, after, limit)
}

// ExplainForTest returns the lines of EXPLAIN for query, sent with args as the store
// sends it.
func (db *DB) ExplainForTest(ctx context.Context, query string, args []any) ([]string, error) {
	rows, err := db.pool.Query(ctx, `EXPLAIN `+query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// PetListenerPIDForTest is the backend process id of db's listening connection, 0
// while it has none.
func PetListenerPIDForTest(db *DB) uint32 { return db.notices.listenerPID.Load() }

// PetCacheSuspendedForTest reports whether db's pet cache is suspended (its listener
// is down).
func PetCacheSuspendedForTest(db *DB) bool { return db.pets.Suspended() }

// BareBatchForTest runs the SQL of one batch of n orders of one pet on conn, as
// placeBatch sends it (the same statements, two pipelined round trips, a COMMIT),
// without PlanOrders or anything else of Go in between: what PostgreSQL alone costs a
// batch (BenchmarkBatchSQLFloor). lockOnly sends only BEGIN, the pet's lock, its
// UPDATE and the COMMIT: the floor of any batch that changes a pet durably.
func BareBatchForTest(ctx context.Context, conn *pgx.Conn, pet, account, category int64, n int, lockOnly bool, seq *int64) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(qLockPets, []int64{pet})
	if !lockOnly {
		b.Queue(qOrderIDs, n)
	}
	var stock int32
	ids := make([]int64, 0, n)
	err := readBatch(conn.SendBatch(ctx, b), func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		rows, _ := br.Query()
		for rows.Next() {
			v, err := rows.Values() // every column, as placeBatch reads them
			if err != nil {
				return err
			}
			stock = v[4].(int32)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if lockOnly {
			return nil
		}
		rows, _ = br.Query()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	w := &pgx.Batch{}
	w.Queue(qSavePets, []int64{pet}, []string{"available"}, []int32{stock - int32(n)}, []int32{0}, []int32{0}, []int32{0})
	if !lockOnly {
		now := timestamp(time.Now())
		var o orderRows
		price := int64(1999)
		for _, id := range ids {
			o.add(petstore.Order{ID: id, PetID: pet, AccountID: account, Quantity: 1, CreatedAt: now, UnitPrice: &price, PetName: "Bo", CategoryID: category})
		}
		w.Queue(qInsertOrders, o.ids, o.pets, o.accounts, o.qty, o.ships, o.created, o.prices, o.names, o.categories)
		queueSales(w, []petstore.SalesLine{{Day: petstore.SalesDay(now), PetID: pet, CategoryID: category,
			SalesFigures: petstore.SalesFigures{Orders: int64(n), Units: int64(n), Revenue: int64(n) * price}}})
		evIDs, types, created, data := make([]string, n), make([]string, n), make([]time.Time, n), make([]string, n)
		for i, id := range ids {
			*seq++
			evIDs[i], types[i], created[i] = fmt.Sprintf("evt_floor_%d", *seq), "order.placed", now
			data[i] = fmt.Sprintf(floorEventData, id, pet, account)
		}
		w.Queue(qInsertEvents, evIDs, types, created, data)
	}
	_, err = sendWrites(ctx, conn, w)
	return err
}

// floorEventData is an order.placed event's data about as long as the store writes.
const floorEventData = `{"order":{"id":%d,"petId":%d,"accountId":%d,"quantity":1,"status":"placed","complete":false,` +
	`"createdAt":"2026-11-28T01:00:00.123456Z","unitPrice":1999,"total":1999,"currency":"EUR","petName":"Bo","categoryId":1},` +
	`"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}`

// HoldIdleConnsForTest opens n connections in db's pool and returns them to it, idle.
func HoldIdleConnsForTest(ctx context.Context, db *DB, n int) error {
	conns := make([]*pgxpool.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for range n {
		c, err := db.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	return nil
}
