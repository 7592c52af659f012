package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// An operator's command beside a server whose log a long reader holds (Litestream
// keeps a read transaction open all the time) closes without waiting for that
// reader, and the server's writes go on meanwhile. With a TRUNCATE checkpoint at
// its close, the command waited out the whole busy timeout (5 s), holding every
// writer behind it.
func TestAShortLivedOpenerLeavesTheCheckpointToTheServers(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shop.db")
	server, account, pet := shop(t, path, 1000)
	defer server.Close()
	// A long reader on the log (as Litestream's), after writes that are in the log.
	reader, err := sqlite.OpenWith(ctx, path, sqlite.Options{ShortLived: true})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	conn, err := sqlite.ReaderForTest(reader).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM orders").Scan(&n); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	if _, err := server.PlaceOrder(ctx, petstore.NewOrder{AccountID: account, PetID: pet, Quantity: 1}); err != nil {
		t.Fatal(err)
	}

	cmd, err := sqlite.OpenWith(ctx, path, sqlite.Options{MustExist: true, ShortLived: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.CreateAccount(ctx, "ops@example.com", "", petstore.Admin); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- cmd.Close() }()
	// The server writes while the command closes: a checkpoint waiting on the reader
	// would hold this order until the busy timeout, then fail it.
	if _, err := server.PlaceOrder(ctx, petstore.NewOrder{AccountID: account, PetID: pet, Quantity: 1}); err != nil {
		t.Fatalf("an order while the command closes: %v", err)
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second): // the busy timeout is 5 s
		t.Fatal("the command's Close waits for the server's reader")
	}
}

// An operator's command waits for a write lock that a server holds longer than a
// request's 5 s: on a busy shop, `petstore keys create` must not fail with "database
// is locked" (CI saw it beside a server the code samples kept writing).
func TestAShortLivedOpenerWaitsOutABusyWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shop.db")
	server, _, _ := shop(t, path, 1)
	defer server.Close()
	cmd, err := sqlite.OpenWith(ctx, path, sqlite.Options{MustExist: true, ShortLived: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cmd.Close()

	conn, err := sqlite.WriterForTest(server).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	held := 6 * time.Second // past the 5 s a request waits
	release := time.AfterFunc(held, func() { conn.ExecContext(ctx, "COMMIT") })
	defer release.Stop()
	if _, err := cmd.EnsureAccount(ctx, "ops@example.com", petstore.Admin); err != nil {
		t.Fatalf("the command gave up after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if waited := time.Since(start); waited < held {
		t.Fatalf("the command wrote after %v, while the server held the lock", waited)
	}
}
