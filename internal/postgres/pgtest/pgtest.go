// Package pgtest gives each test a PostgreSQL database state of its own: a new
// schema in the test database, migrated and empty, dropped when the test ends. Only
// tests import it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	var b [8]byte
	rand.Read(b[:])
	schema := "petstore_test_" + hex.EncodeToString(b[:])
	admin(t, dbURL, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { admin(t, dbURL, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
	return withParams(t, dbURL, map[string]string{"search_path": schema})
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
	u := withParams(t, Schema(t, dbURL), map[string]string{"pool_max_conns": strconv.Itoa(MaxConns)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := postgres.OpenWith(ctx, u, o)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// admin runs one statement on a connection of its own (the test's context may be
// over when clean-ups run).
func admin(t testing.TB, dbURL, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect to the test database: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// withParams adds connection parameters to a postgres:// URL or to a key=value
// connection string.
func withParams(t testing.TB, dbURL string, params map[string]string) string {
	t.Helper()
	if !strings.Contains(dbURL, "://") {
		for k, v := range params {
			dbURL += " " + k + "=" + v
		}
		return dbURL
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		// The error would show the URL, password and all.
		t.Fatalf("%s is not a URL", EnvURL)
	}
	q := u.Query()
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
