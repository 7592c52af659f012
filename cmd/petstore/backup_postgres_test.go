package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/postgres/pgtest"
)

// TestAPgDumpOfARunningShopRestoresIntoANewDatabase is the backup of the PostgreSQL
// store as docs/OPERATING.md#backups gives it: pg_dump of a shop while orders stream
// in, pg_restore into a new database, and the service serving that one. Every order
// acknowledged before the dump began is there with its quantity, and the stock and
// the orders add up. Skipped without PETSTORE_TEST_POSTGRES_URL; it needs pg_dump and
// pg_restore of the server's major version (the Debian client on this machine).
func TestAPgDumpOfARunningShopRestoresIntoANewDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	base := pgtest.URL(t)
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (apt-get install postgresql-client): %v", tool, err)
		}
	}
	bin := buildPetstore(t)
	dsn := pgtest.Schema(t, base)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	key := adminKey(t, bin, dsn)
	addr := freeAddr(t)
	startBinary(t, bin, "--addr", addr, "--database", dsn, "--no-bootstrap", "--rate-limit", "0", "--admin-addr", "off")
	api := adminClient{t: t, base: "http://" + addr + "/v1", key: key}
	const stock = 100_000
	pet := api.pet(stock)

	var (
		mu     sync.Mutex
		placed = map[int64]time.Time{} // order id → when its 201 came
		wg     sync.WaitGroup
	)
	stop := make(chan struct{})
	client := &http.Client{Timeout: 10 * time.Second}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, o, err := send(client, api, "POST", "/store/orders", fmt.Sprintf(`{"petId":%d,"quantity":1}`, pet))
				if err != nil || code != http.StatusCreated {
					t.Errorf("order: %d %v %v", code, o, err)
					return
				}
				mu.Lock()
				placed[int64(o["id"].(float64))] = time.Now()
				mu.Unlock()
			}
		}()
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(placed)
	}
	waitUntil(t, 30*time.Second, func() bool { return count() >= 200 }, "200 orders acknowledged")

	// The commands of docs/OPERATING.md, on the test database's URL (libpq reads no
	// search_path in a URL: the schema is named by --schema instead).
	dump := filepath.Join(t.TempDir(), "petstore.dump")
	began := time.Now()
	if out, err := exec.Command("pg_dump", "--format=custom", "--schema="+schema, "--file="+dump, base).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	close(stop)
	wg.Wait()
	newDB := newDatabase(t, base)
	target := *u
	target.Path = "/" + newDB
	q := target.Query()
	q.Del("search_path")
	target.RawQuery = q.Encode()
	if out, err := exec.Command("pg_restore", "--no-owner", "--exit-on-error", "--dbname="+target.String(), dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	q.Set("search_path", schema)
	target.RawQuery = q.Encode()

	addr2 := freeAddr(t)
	startBinary(t, bin, "--addr", addr2, "--database", target.String(), "--no-bootstrap", "--rate-limit", "0", "--admin-addr", "off")
	restored := adminClient{t: t, base: "http://" + addr2 + "/v1", key: key}
	mu.Lock()
	defer mu.Unlock()
	before := 0
	for id, at := range placed {
		if !at.Before(began) {
			continue
		}
		before++
		if code, o := restored.call("GET", fmt.Sprintf("/store/orders/%d", id), ""); code != http.StatusOK || o["quantity"] != 1.0 {
			t.Errorf("order %d, acknowledged before pg_dump began, in the restored shop: %d %v", id, code, o)
		}
	}
	// Every order is of one: the stock says how many the restored shop holds.
	code, p := restored.call("GET", fmt.Sprintf("/store/inventory/%d", pet), "")
	if code != http.StatusOK {
		t.Fatalf("the restored shop's inventory of pet %d: %d %v", pet, code, p)
	}
	left := int(p["quantity"].(float64))
	inCopy := stock - left
	if inCopy < before || inCopy > len(placed)+4 {
		t.Errorf("the restored shop has %d in stock: %d orders, want from %d (before the dump) to %d (all, and 4 in flight)", left, inCopy, before, len(placed)+4)
	}
	// The service writes to the restored database: it is a shop, not a read-only copy.
	if code, o, err := send(client, restored, "POST", "/store/orders", fmt.Sprintf(`{"petId":%d,"quantity":2}`, pet)); err != nil || code != http.StatusCreated {
		t.Errorf("an order in the restored shop: %d %v %v", code, o, err)
	}
	t.Logf("pg_dump of a running shop: %d orders acknowledged, %d before the dump began, %d in the restored database", len(placed), before, inCopy)
}

// newDatabase creates a database of its own for the test on the server of dbURL and
// drops it when the test ends.
func newDatabase(t *testing.T, dbURL string) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	name := "petstore_restore_" + hex.EncodeToString(b[:])
	admin := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := admin("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		// WITH (FORCE): the server that served it may still be going down.
		if err := admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return name
}
