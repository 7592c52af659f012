package postgres

import (
	"context"
	"io/fs"

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
