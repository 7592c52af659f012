// Package postgres implements petstore.Store on PostgreSQL with pgx (native
// interface, pgxpool), so that any number of server processes can share one
// database.
//
// Every store rule runs in one transaction that first locks the pet's row
// (SELECT … FOR UPDATE), which holds the pet's status, stock and count of open
// orders, applies the rule function of package petstore and writes the result back.
// Every change to a pet's stock, status or open orders happens under that lock, so
// the check and the take are atomic across processes: no overselling.
//
// Statements are prepared and cached per connection by pgx. Statements that do not
// depend on one another travel together in one batch (one round trip).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"go.opentelemetry.io/otel/trace"

	"github.com/acme-pets/petstore/internal/groupcommit"
	"github.com/acme-pets/petstore/internal/petcache"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/tracing"
)

// DB is the PostgreSQL store. It implements petstore.Store and is safe for
// concurrent use.
type DB struct {
	pool *pgxpool.Pool
	// placers gather concurrent orders into batches (placeOrders), each for a share
	// of the pets, so that batches of different pets run side by side.
	placers []*groupcommit.Batcher[petstore.NewOrder, petstore.PlacedOrder]
	// pets caches pets read by id; notices keeps it in step with other processes
	// (petcache.go).
	pets     *petcache.Cache
	notices  *petNotices
	now      func() time.Time
	wakeHook func()
	feedHook func()
	// commit is a batch of orders' second round trip: sendWrites, which tests replace
	// to hold or fail a batch before its COMMIT (SetBeforeCommitForTest).
	commit func(ctx context.Context, conn *pgx.Conn, w *pgx.Batch) (pgconn.CommandTag, error)
	// currency is the shop's (see Currency).
	currency atomic.Pointer[string]
	// claimTurn rotates the endpoint a claim serves first.
	claimTurn atomic.Uint64
	// purgeChunk is how many rows a purge deletes at a time (tests make it small);
	// purged is told each full chunk.
	purgeChunk int
	purged     func(int64)
}

// DefaultMaxBatch bounds how many orders share one transaction.
const DefaultMaxBatch = 128

// DefaultPetCacheTTL bounds how long a pet read by id may be served from memory: a
// change made through this DB is seen at once, one made by another process usually
// within milliseconds (its notice) and at most within this time.
const DefaultPetCacheTTL = petcache.DefaultTTL

// batchTimeout bounds one batch of orders, waiting for pets' locks included.
const batchTimeout = 10 * time.Second

// Options tune a DB. The zero value is what the service runs with; tests set the
// clock (and hold or fail batches of orders with SetBeforeCommitForTest).
type Options struct {
	// Now is the store's clock; time.Now when nil.
	Now func() time.Time
	// MaxBatch bounds how many orders share one transaction; DefaultMaxBatch when 0.
	MaxBatch int
	// PetCacheTTL bounds how long a pet read by id is served from memory (see
	// petcache.go): DefaultPetCacheTTL when 0, no cache when negative.
	PetCacheTTL time.Duration
	// Loops is the number of placement loops, each placing the orders of a share of
	// the pets; when 0, half the pool's connections (at least one).
	Loops int
	// WakeDispatcher, when set, is called after a commit that made deliveries due
	// (events with subscribed endpoints, a test event, a retry by hand), so that a
	// dispatcher in the process can start on them without waiting for its next poll.
	// It is called on the committing goroutine and must not block.
	WakeDispatcher func()
	// WakeFeed, when set, is called after every commit that wrote events, to wake
	// the live stream's reader of this process (eventhub.Hub.Wake). It must not block.
	WakeFeed func()
	// Tracer, when set, makes each batch of orders a span ("groupcommit.batch") linked
	// to the requests it carries (groupcommit.Traced); nil for none.
	Tracer trace.TracerProvider
}

var _ petstore.Store = (*DB)(nil)

// Open connects to the PostgreSQL database at url (postgres:// or postgresql://,
// or a key=value connection string) and applies the migrations. Pool settings
// (pool_max_conns and the others of pgxpool.ParseConfig) and run-time parameters
// such as search_path may be given in the URL's query.
func Open(ctx context.Context, url string) (*DB, error) {
	return OpenWith(ctx, url, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, url string, o Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgconn's error shows the URL with its password redacted.
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		// timestamptz values read back in UTC, as the Store conventions want.
		c.TypeMap().RegisterType(&pgtype.Type{
			Name:  "timestamptz",
			OID:   pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC},
		})
		return nil
	}
	// A server that ends a session on purpose (a restart, a failover, an
	// administrator's pg_terminate_backend) has usually ended the others too: the pool
	// drops its idle connections at the first such error, so that the requests after
	// it do not each find another dead one (pgxpool pings only the connections idle
	// for more than a second before handing them out).
	var resetOnShutdown atomic.Pointer[pgxpool.Pool]
	cfg.ConnConfig.OnPgError = func(_ *pgconn.PgConn, e *pgconn.PgError) bool {
		if e.Code == "57P01" || e.Code == "57P02" { // admin_shutdown, crash_shutdown
			if p := resetOnShutdown.Load(); p != nil {
				p.Reset()
			}
		}
		return e.Severity != "FATAL" // as pgconn's own handler: a fatal error ends the connection
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	resetOnShutdown.Store(pool)
	if err := Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.Loops == 0 {
		o.Loops = max(1, int(cfg.MaxConns)/2)
	}
	if o.PetCacheTTL == 0 {
		o.PetCacheTTL = DefaultPetCacheTTL
	}
	db := &DB{pool: pool, pets: petcache.New(o.PetCacheTTL, 0), now: o.Now, wakeHook: o.WakeDispatcher, feedHook: o.WakeFeed, commit: sendWrites,
		purgeChunk: purgeChunk, purged: func(int64) {}}
	if err := db.loadCurrency(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if db.notices, err = startPetNotices(ctx, pool, db.pets); err != nil {
		pool.Close()
		return nil, err
	}
	for range o.Loops {
		db.placers = append(db.placers, groupcommit.New(db.placeOrders, o.MaxBatch, batchTimeout, batchTracing(o.Tracer)...))
	}
	return db, nil
}

// Ping reports whether the database answers and takes writes (it is not a standby
// or set read-only).
func (db *DB) Ping(ctx context.Context) error {
	var readOnly string
	if err := db.pool.QueryRow(ctx, `SHOW transaction_read_only`).Scan(&readOnly); err != nil {
		return fmt.Errorf("ping postgres: %w", err)
	}
	if readOnly != "off" {
		return errors.New("ping postgres: the database takes no writes (transaction_read_only is on)")
	}
	return nil
}

// Unavailable reports the PostgreSQL failures that pass and are not the caller's
// fault: a lost or refused connection, the server shutting down or starting
// (57P01–57P03), a lack of resources such as a full disk (class 53), a
// serialization failure or deadlock (40001, 40P01), a read-only database (25006).
func (db *DB) Unavailable(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	// The connection ended under a query: the server went away or cut the session.
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	code := pgCode(err)
	switch {
	case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"):
		return true
	}
	switch code {
	case "57P01", "57P02", "57P03", "40001", deadlockDetected, "25006":
		return true
	}
	return false
}

// Close closes every connection of the pool, waiting for those in use to come back.
func (db *DB) Close() error {
	for _, q := range db.placers {
		q.Close()
	}
	db.notices.close()
	db.pool.Close()
	return nil
}

// Stats returns a snapshot of the connection pool's statistics, for metrics:
// connections acquired, idle and in total, and how long acquiring them waited.
func (db *DB) Stats() *pgxpool.Stat {
	return db.pool.Stat()
}

// changed forgets pets that a write touched, here and, by a notice, in the other
// processes (petNotices.changed). It is called after the write, whether or not it
// committed.
func (db *DB) changed(ids ...int64) { db.notices.changed(ids...) }

// update runs fn in one transaction and commits it if fn returns nil. The deferred
// rollback also ends the transaction when fn panics (UpdatePet calls back into the
// caller); after a commit it does nothing.
func (db *DB) update(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// timestamp is t as PostgreSQL keeps it: in UTC, to the microsecond. Times are cut
// down before they are written, so that what a method returns equals what a later
// read returns.
func timestamp(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}

// optionalTimestamp is timestamp for an optional time.
func optionalTimestamp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := timestamp(*t)
	return &u
}

// The SQLSTATE codes that the store turns into domain errors.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
	deadlockDetected    = "40P01"
)

// pgCode returns the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func isUnique(err error) bool { return pgCode(err) == uniqueViolation }

// isConstraint reports a broken constraint (SQLSTATE class 23).
func isConstraint(err error) bool { return strings.HasPrefix(pgCode(err), "23") }
func isForeignKey(err error) bool { return pgCode(err) == foreignKeyViolation }

// noRows reports whether a single-row query found nothing.
func noRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// batchTracing is the groupcommit options of tp: none when it is nil.
func batchTracing(tp trace.TracerProvider) []groupcommit.Option {
	if tp == nil {
		return nil
	}
	return []groupcommit.Option{groupcommit.Traced(tp.Tracer(tracing.Name), "groupcommit.batch")}
}
