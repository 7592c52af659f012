// Package pgtest gives each test a PostgreSQL database state of its own: a new
// schema in the test database, migrated and empty, dropped when the test ends. Tests
// import it, and loadbench for its schemas (NewSchema).
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/postgres"
)

// EnvURL names the environment variable with the URL of the test database, for
// example postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const EnvURL = "PETSTORE_TEST_POSTGRES_URL"

// MaxConns is the size of the pool of each test's store. The store behaviour suite
// runs its tests in parallel, each with a store of its own; small pools keep them
// all within PostgreSQL's max_connections (100 by default).
const MaxConns = 4

// URL returns the URL of the test database from EnvURL; without one, the test is
// skipped.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		t.Skip(EnvURL + " is not set")
	}
	return u
}

// Schema creates a new, empty schema in the database at dbURL, drops it with
// everything in it when the test ends, and returns dbURL with the schema as its
// search_path, so that whatever connects with the returned URL works in the schema.
func Schema(t testing.TB, dbURL string) string {
	t.Helper()
	u, drop, err := NewSchema(context.Background(), dbURL, "petstore_test_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	return u
}

// NewSchema creates a new, empty schema named prefix and a random suffix in the
// database at dbURL, and returns dbURL with the schema as its search_path and a drop
// that removes the schema with everything in it.
func NewSchema(ctx context.Context, dbURL, prefix string) (string, func() error, error) {
	var b [8]byte
	rand.Read(b[:])
	schema := prefix + hex.EncodeToString(b[:])
	u, err := withParams(dbURL, map[string]string{"search_path": schema})
	if err != nil {
		return "", nil, err
	}
	if err := admin(ctx, dbURL, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, err
	}
	drop := func() error { return admin(context.Background(), dbURL, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") }
	return u, drop, nil
}

// Open opens a store on a new schema (see Schema) of the database at dbURL, with a
// pool of at most MaxConns connections. The store is closed, and then its schema
// dropped, when the test ends.
func Open(t testing.TB, dbURL string) *postgres.DB {
	t.Helper()
	return OpenWith(t, dbURL, postgres.Options{})
}

// OpenWith is Open with options.
func OpenWith(t testing.TB, dbURL string, o postgres.Options) *postgres.DB {
	t.Helper()
	u, err := withParams(Schema(t, dbURL), map[string]string{"pool_max_conns": strconv.Itoa(MaxConns)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := postgres.OpenWith(ctx, u, o)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// admin runs one statement on a connection of its own (a test's context may be over
// when clean-ups run), within a minute.
func admin(ctx context.Context, dbURL, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect to the test database: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// withParams adds connection parameters to a postgres:// URL or to a key=value
// connection string.
func withParams(dbURL string, params map[string]string) (string, error) {
	if !strings.Contains(dbURL, "://") {
		for k, v := range params {
			dbURL += " " + k + "=" + v
		}
		return dbURL, nil
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		// The parser's error would show the URL, password and all.
		return "", errors.New("the database URL is not a URL")
	}
	q := u.Query()
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// SettleFeed waits until every transaction of the cluster that had begun when it was
// called has ended, so that the event feed shows every event committed before then.
// The feed stops short of the oldest running transaction (see package postgres), and
// tests in parallel, in other schemas, run transactions of their own: a test that
// reads the feed right after its own writes waits here for theirs.
func SettleFeed(t testing.TB, dbURL string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect to the test database: %v", err)
	}
	defer conn.Close(context.Background())
	// Outside a transaction a query takes no transaction id of its own, so it never
	// holds itself back.
	const qNext, qOldest = `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`,
		`SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint`
	var next, oldest int64
	if err := conn.QueryRow(ctx, qNext).Scan(&next); err != nil {
		t.Fatalf("read the next transaction id: %v", err)
	}
	for {
		if err := conn.QueryRow(ctx, qOldest).Scan(&oldest); err != nil {
			t.Fatalf("the transactions begun before %d did not end: %v", next, err)
		}
		if oldest >= next {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
