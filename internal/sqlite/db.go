// Package sqlite implements petstore.Store on an SQLite file with modernc.org/sqlite
// (pure Go, no cgo).
//
// One writer connection runs every write transaction as BEGIN IMMEDIATE, so writers
// queue in the pool of this process and on SQLite's lock (with a busy timeout) across
// processes, and never deadlock on a read lock upgraded too late. A separate read-only
// pool serves reads, which WAL lets run beside the writer.
//
// Every commit is durable (synchronous=FULL: the WAL is synced before the commit
// returns), so an acknowledged order survives a power cut. Orders, the hottest write,
// are placed in batches that share one transaction and one sync (groupcommit).
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"go.opentelemetry.io/otel/trace"

	"github.com/acme-pets/petstore/internal/groupcommit"
	"github.com/acme-pets/petstore/internal/petcache"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/tracing"
)

//go:embed migrations/*.sql
var migrations embed.FS

// pragmas are set on every pooled connection through the DSN, after busy_timeout
// (busyTimeout), which comes first so that the others wait for a lock rather than fail
// with SQLITE_BUSY. synchronous=FULL syncs the WAL at every commit: with NORMAL, a
// commit acknowledged just before a power cut could be lost.
const pragmas = "&_pragma=journal_mode(WAL)" +
	"&_pragma=synchronous(FULL)" +
	"&_pragma=foreign_keys(ON)"

// writerPragmas are the writer's own. temp_store=MEMORY keeps its statement journals
// in memory: a batch's multi-row INSERTs (multirow.go) may fail halfway, so SQLite
// copies every page they change into one, and past 64 KiB it would spill it to a
// temporary file made and deleted in every batch. Nothing of it is durable state; what
// else the writer makes temporary (the small lists of a purge's or a claim's
// subqueries) is bounded by their LIMITs.
const writerPragmas = "&_pragma=temp_store(MEMORY)"

// busyTimeout is how long a connection waits for a lock another process holds. A
// server's request gives up after 5 s (its budget is about that). An operator's
// command (ShortLived) waits a minute: SQLite's lock is not fair, and beside a server
// that writes all the time a command probing every 100 ms can miss every gap of a
// few seconds; "database is locked" is no answer to `petstore keys create` on a busy
// shop.
func busyTimeout(o Options) string {
	if o.ShortLived {
		return "_pragma=busy_timeout(60000)"
	}
	return "_pragma=busy_timeout(5000)"
}

// DefaultMaxBatch bounds how many orders share one transaction.
const DefaultMaxBatch = 128

// DefaultPetCacheTTL bounds how long a pet read by id may be served from memory. A
// change made through this DB is seen at once (every write forgets the pets it
// touched); a change made by another process sharing the file shows within this time.
const DefaultPetCacheTTL = petcache.DefaultTTL

// batchTimeout bounds one batch of orders, waiting for the write lock included.
const batchTimeout = 10 * time.Second

// Options tune a DB. The zero value is what the service runs with; tests set the
// clock (and hold or fail batches of orders with SetBeforeCommitForTest).
type Options struct {
	// Now is the store's clock; time.Now when nil.
	Now func() time.Time
	// MaxBatch bounds how many orders share one transaction; DefaultMaxBatch when 0.
	MaxBatch int
	// PetCacheTTL bounds how long a pet read by id is served from memory (see
	// package petcache); DefaultPetCacheTTL when 0, no cache when negative.
	PetCacheTTL time.Duration
	// WakeDispatcher, when set, is called after a commit that gave the webhook
	// dispatcher work (events an enabled endpoint may want, a test event, a retry by
	// hand), to wake the dispatcher of this process.
	WakeDispatcher func()
	// WakeFeed, when set, is called after every commit that wrote events, to wake
	// the live stream's reader of this process (eventhub.Hub.Wake).
	WakeFeed func()
	// ExternalCheckpoints leaves checkpoints to another program (Litestream, which
	// must read every WAL frame before it is checkpointed: internal/replica): no
	// automatic checkpoint after commits, none at Close.
	ExternalCheckpoints bool
	// ShortLived marks an operator's command (keys create, accounts invite…) that
	// opens the database beside running servers: it leaves the checkpoint at Close to
	// them. A TRUNCATE checkpoint waits for every reader to leave the log, Litestream's
	// long read above all, and holds the servers' writers meanwhile; when the command
	// is the last connection, SQLite checkpoints as it closes anyway.
	ShortLived bool
	// Tracer, when set, makes each batch of orders a span ("groupcommit.batch") linked
	// to the requests it carries (groupcommit.Traced); nil for none.
	Tracer trace.TracerProvider
	// MustExist refuses a file that does not exist (ErrNoDatabase) instead of creating
	// it: the operator's commands work on the database the server uses, and a
	// mistyped path must not get a new one with a key in it. SQLite checks it as it
	// opens (mode=rw), so no other process can make the file in between.
	MustExist bool
}

// ErrNoDatabase is the error of OpenWith with MustExist when the file does not exist.
var ErrNoDatabase = errors.New("no database file")

// DB is the SQLite store. It implements petstore.Store and is safe for concurrent use.
type DB struct {
	write *sql.DB // one connection; every transaction is BEGIN IMMEDIATE
	read  *sql.DB // read-only pool
	// lock is the shared lock on the database's lock file, held until Close, so that
	// no restore replaces the file under the process (lock.go).
	lock *fileLock

	// writeStmts are prepared in Open, before any transaction can hold the only
	// writer connection: preparing on the writer pool inside a transaction would wait
	// for that connection forever.
	writeStmts map[string]*sql.Stmt
	readStmts  stmtCache

	// placer gathers concurrent orders into batches (placeOrders).
	placer   *groupcommit.Batcher[petstore.NewOrder, petstore.PlacedOrder]
	pets     *petcache.Cache
	now      func() time.Time
	wakeHook func()
	feedHook func()
	// beforeCommit runs last in each batch of orders' transaction: nothing, but in
	// tests that hold or fail a batch before its commit (SetBeforeCommitForTest).
	beforeCommit func() error
	// currency is the shop's (see Currency).
	currency atomic.Pointer[string]
	// claimTurn rotates the endpoint a claim serves first.
	claimTurn atomic.Uint64
	// purgeChunk is how many rows a purge deletes at a time (tests make it small);
	// purged is told each full chunk.
	purgeChunk int
	purged     func(int64)
	// checkpointOnClose is false when another program owns the checkpoints.
	checkpointOnClose bool
}

var _ petstore.Store = (*DB)(nil)

// Open opens (creating it if needed) the SQLite database file at path and applies
// the migrations. path is a file name, not a URI; an in-memory database cannot work,
// as the writer and the readers would each get their own.
func Open(ctx context.Context, path string) (*DB, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, o Options) (*DB, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("open sqlite: %q is not a file name", path)
	}
	// A file: URI lets SQLite read mode=ro; the path is escaped so that '?' or '#'
	// in a file name cannot be taken for URI syntax.
	uri := "file:" + (&url.URL{Path: path}).EscapedPath()

	mode := ""
	if o.MustExist {
		// Checked before the lock, whose file would otherwise be made beside nothing.
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("open sqlite %s: %w", path, ErrNoDatabase)
		}
		mode = "mode=rw&"
	}
	lock, err := lockShared(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	db, err := openLocked(ctx, path, uri, mode, o)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	db.lock = lock
	return db, nil
}

// openLocked is OpenWith once the database's shared lock is held; mode is the URI's
// open mode ("mode=rw&" when the file must already exist).
func openLocked(ctx context.Context, path, uri, mode string, o Options) (*DB, error) {
	// Litestream's checkpoints are its own; everyone else keeps SQLite's automatic
	// ones after commits.
	write, read, err := openPools(ctx, path, uri, mode, o, !o.ExternalCheckpoints)
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.PetCacheTTL == 0 {
		o.PetCacheTTL = DefaultPetCacheTTL
	}
	db := &DB{write: write, read: read, now: o.Now, wakeHook: o.WakeDispatcher, feedHook: o.WakeFeed, beforeCommit: func() error { return nil },
		purgeChunk: purgeChunk, purged: func(int64) {}, writeStmts: make(map[string]*sql.Stmt),
		pets: petcache.New(o.PetCacheTTL, 0), checkpointOnClose: !o.ExternalCheckpoints && !o.ShortLived}
	db.readStmts.db = read
	for _, q := range hotWrites {
		s, err := write.PrepareContext(ctx, q)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		db.writeStmts[q] = s
	}
	if err := db.loadCurrency(ctx); err != nil {
		db.Close()
		return nil, err
	}
	db.placer = groupcommit.New(db.placeOrders, o.MaxBatch, batchTimeout, batchTracing(o.Tracer)...)
	return db, nil
}

// openPools opens the writer's pool (one connection, every transaction BEGIN
// IMMEDIATE), migrates the database, then opens the readers' pool; autoCheckpoint
// keeps SQLite's checkpoints after commits on the writer.
func openPools(ctx context.Context, path, uri, mode string, o Options, autoCheckpoint bool) (write, read *sql.DB, err error) {
	dsn := uri + "?" + mode + busyTimeout(o) + pragmas + writerPragmas + "&_txlock=immediate"
	if !autoCheckpoint {
		dsn += "&_pragma=wal_autocheckpoint(0)"
	}
	if write, err = sql.Open("sqlite", dsn); err != nil {
		return nil, nil, fmt.Errorf("open sqlite writer: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)

	// The writer must have made the file (and turned on WAL, which is persistent)
	// before a read-only connection can open it.
	if err := pingWriter(ctx, write); err != nil {
		write.Close()
		return nil, nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := Migrate(ctx, write); err != nil {
		write.Close()
		return nil, nil, err
	}

	if read, err = sql.Open("sqlite", uri+"?mode=ro&"+busyTimeout(o)+pragmas); err != nil {
		write.Close()
		return nil, nil, fmt.Errorf("open sqlite reader: %w", err)
	}
	n := min(max(runtime.GOMAXPROCS(0), 4), 8)
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	read.SetConnMaxLifetime(0)
	read.SetConnMaxIdleTime(0)
	if err := read.PingContext(ctx); err != nil {
		read.Close()
		write.Close()
		return nil, nil, fmt.Errorf("open sqlite reader %s: %w", path, err)
	}
	return write, read, nil
}

// Ping reports whether both pools reach the database file and a write can be
// committed (a full disk or a read-only file cannot take one).
func (db *DB) Ping(ctx context.Context) error {
	var v int
	if err := db.read.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&v); err != nil {
		return fmt.Errorf("ping sqlite reader: %w", err)
	}
	err := db.update(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO readiness (id, checked_at) VALUES (1, ?)`, formatTime(db.now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("ping sqlite writer: %w", err)
	}
	return nil
}

// pingWriter opens the writer's connection. Processes starting together on a new
// file race to turn on WAL, and SQLite answers the losers SQLITE_BUSY at once, without
// its busy timeout (changing the journal mode does not wait): they try again.
func pingWriter(ctx context.Context, write *sql.DB) error {
	for try := 0; ; try++ {
		err := write.PingContext(ctx)
		if err == nil || sqliteCode(err)&0xff != sqlite3.SQLITE_BUSY || try == 50 {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(10+rand.IntN(40)) * time.Millisecond):
		}
	}
}

// Unavailable reports the SQLite failures that pass and are not the caller's fault:
// busy or locked past the busy timeout, a full disk, an I/O error, a file that cannot
// be opened or written.
func (db *DB) Unavailable(err error) bool {
	switch sqliteCode(err) & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR,
		sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_PROTOCOL:
		return true
	}
	return false
}

// Close checkpoints the write-ahead log into the database file (unless another program
// owns the checkpoints) and closes both pools.
func (db *DB) Close() error {
	if db.placer != nil {
		db.placer.Close()
	}
	var errs []error
	db.readStmts.close()
	for _, s := range db.writeStmts {
		s.Close()
	}
	if err := db.read.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close sqlite reader: %w", err))
	}
	// With the readers gone the checkpoint can copy every frame and truncate the log.
	if db.checkpointOnClose {
		if _, err := db.write.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			errs = append(errs, fmt.Errorf("checkpoint sqlite: %w", err))
		}
	}
	if err := db.write.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close sqlite writer: %w", err))
	}
	// Last: the files are closed, so a restore may replace them now.
	if err := db.lock.Unlock(); err != nil {
		errs = append(errs, fmt.Errorf("unlock sqlite: %w", err))
	}
	return errors.Join(errs...)
}

// Stats are the connection pool statistics of both pools.
type Stats struct {
	Writer sql.DBStats
	Reader sql.DBStats
}

// Stats returns the statistics of the writer and the reader pools, for metrics.
func (db *DB) Stats() Stats {
	return Stats{Writer: db.write.Stats(), Reader: db.read.Stats()}
}

// update runs fn in one write transaction (BEGIN IMMEDIATE) and commits it if fn
// returns nil.
func (db *DB) update(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		// SQLITE_BUSY here is another process holding the write lock past
		// busy_timeout: Unavailable calls it passing, and the HTTP layer words it.
		return fmt.Errorf("begin: %w", err)
	}
	// Deferred, so that a panic in fn (UpdatePet and PlaceOrder call back into the
	// caller) cannot keep the only writer connection; after Commit it does nothing.
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// hotWrites are the statements of the write transactions on the hot paths (placing
// an order above all, and the dispatcher's claims and records), prepared once in Open.
var hotWrites = slices.Concat([]string{qPetState, qSetPetState, qAddSales, qAddSalesDay, qAddSalesCategory, qIdempotencyRecord, qSaveIdempotencyRecord,
	qInsertEvent, qAnyWebhook}, insertOrder.all(), insertEvents.all(), webhookWrites)

// txStmt returns the statement for query bound to tx: the one prepared in Open for a
// hot query, else one prepared for this transaction only.
func (db *DB) txStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if s, ok := db.writeStmts[query]; ok {
		return tx.StmtContext(ctx, s), nil
	}
	s, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	return s, nil
}

// uncancelled is the context of a short read on the reader pool: a row by key, or a page
// that an index delivers. Reads in WAL mode never wait for a lock, and these take
// microseconds: they are not made cancellable, which would cost a goroutine in
// database/sql and another in the driver on every query. A list that may scan (orders
// filtered by completion, which no index serves) keeps the request's context.
func uncancelled(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// readStmt returns the prepared reader statement for query.
func (db *DB) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	return db.readStmts.get(ctx, query)
}

// stmtCache prepares each query once per pool; database/sql then prepares it once
// per connection and keeps it while the connection lives. Queries are constants or
// built from a handful of fixed shapes, so the cache stays small.
type stmtCache struct {
	db *sql.DB
	mu sync.RWMutex
	m  map[string]*sql.Stmt
}

// get returns the prepared statement of query. Every read takes this path, so a hit
// takes only the shared lock; readers wait on each other only while a new query shape
// is prepared.
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.RLock()
	s, ok := c.m[query]
	c.mu.RUnlock()
	if ok {
		return s, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[query]; ok {
		return s, nil
	}
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	if c.m == nil {
		c.m = make(map[string]*sql.Stmt)
	}
	c.m[query] = s
	return s, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, s := range c.m {
		s.Close()
		delete(c.m, q)
	}
}

// timeLayout is RFC 3339 in UTC with a fixed nine-digit fraction, so that stored
// times sort as text and round-trip to the nanosecond.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// nullTime formats an optional time for a nullable column.
func nullTime(t *time.Time) sql.NullString {
	if t == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: formatTime(*t), Valid: true}
}

// parseNullTime reads a nullable time column.
func parseNullTime(s sql.NullString) (*time.Time, error) {
	if !s.Valid {
		return nil, nil
	}
	t, err := parseTime(s.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// sqliteCode returns the extended result code of an SQLite error, or 0.
func sqliteCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

// isConstraint reports a broken constraint (SQLITE_CONSTRAINT, in any extended form).
func isConstraint(err error) bool {
	return err != nil && sqliteCode(err)&0xff == sqlite3.SQLITE_CONSTRAINT
}

func isUnique(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

func isForeignKey(err error) bool {
	return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// batchTracing is the groupcommit options of tp: none when it is nil.
func batchTracing(tp trace.TracerProvider) []groupcommit.Option {
	if tp == nil {
		return nil
	}
	return []groupcommit.Option{groupcommit.Traced(tp.Tracer(tracing.Name), "groupcommit.batch")}
}
