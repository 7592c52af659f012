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
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/acme-pets/petstore/internal/petstore"
)

// DB is the PostgreSQL store. It implements petstore.Store and is safe for
// concurrent use.
type DB struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

var _ petstore.Store = (*DB)(nil)

// Open connects to the PostgreSQL database at url (postgres:// or postgresql://,
// or a key=value connection string) and applies the migrations. Pool settings
// (pool_max_conns and the others of pgxpool.ParseConfig) and run-time parameters
// such as search_path may be given in the URL's query.
func Open(ctx context.Context, url string) (*DB, error) {
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
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if err := Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &DB{pool: pool, now: time.Now}, nil
}

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping postgres: %w", err)
	}
	return nil
}

// Close closes every connection of the pool, waiting for those in use to come back.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// Stats returns a snapshot of the connection pool's statistics, for metrics:
// connections acquired, idle and in total, and how long acquiring them waited.
func (db *DB) Stats() *pgxpool.Stat {
	return db.pool.Stat()
}

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
	// invalidByteSequence is what a text value with a NUL character gets: PostgreSQL
	// text cannot hold one.
	invalidByteSequence = "22021"
)

// pgCode returns the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func isUnique(err error) bool     { return pgCode(err) == uniqueViolation }
func isForeignKey(err error) bool { return pgCode(err) == foreignKeyViolation }

// noRows reports whether a single-row query found nothing.
func noRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
