package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// drillOrder is what the client of the drill knows of one order: its quantity, when
// its 201 came, and when the 204 of its cancellation came (zero when it was not
// cancelled, or not acknowledged).
type drillOrder struct {
	quantity          int
	placed, cancelled time.Time
	cancelAsked       bool // a DELETE was sent, answered or not
}

// TestTheRestoreDrill is the drill of issue 34 on SQLite with the real binary:
// orders stream in from several clients (some cancelled again), `petstore backup`
// runs mid-stream, the server is killed with SIGKILL, the backup is restored into a
// fresh directory and served. Every order acknowledged before the backup's instant is
// there with its quantity and status, the stock plus the live orders is the stock the
// pet started with, and no order is there that no client placed.
func TestTheRestoreDrill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildPetstore(t)
	dsn := filepath.Join(t.TempDir(), "p.db")
	key := adminKey(t, bin, dsn)
	addr := freeAddr(t)
	server := startBinary(t, bin, "--addr", addr, "--database", dsn, "--no-bootstrap", "--rate-limit", "0", "--admin-addr", "off")
	api := adminClient{t: t, base: "http://" + addr + "/v1", key: key}
	const stock = 1_000_000
	pet := api.pet(stock)

	var (
		mu     sync.Mutex
		orders = map[int64]*drillOrder{}
		wg     sync.WaitGroup
	)
	client := &http.Client{Timeout: 10 * time.Second}
	do := func(method, path, body string) (int, map[string]any, error) {
		code, v, err := send(client, api, method, path, body)
		return code, v, err
	}
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				q := 1 + (w+i)%3
				code, o, err := do("POST", "/store/orders", fmt.Sprintf(`{"petId":%d,"quantity":%d}`, pet, q))
				if err != nil {
					return // the server is gone
				}
				if code != http.StatusCreated {
					t.Errorf("order: %d %v", code, o)
					return
				}
				id := int64(o["id"].(float64))
				mu.Lock()
				orders[id] = &drillOrder{quantity: q, placed: time.Now()}
				mu.Unlock()
				if i%5 != 0 {
					continue
				}
				mu.Lock()
				orders[id].cancelAsked = true
				mu.Unlock()
				code, _, err = do("DELETE", fmt.Sprintf("/store/orders/%d", id), "")
				if err != nil {
					return
				}
				if code != http.StatusNoContent {
					t.Errorf("cancel order %d: %d", id, code)
					return
				}
				mu.Lock()
				orders[id].cancelled = time.Now()
				mu.Unlock()
			}
		}()
	}
	acked := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(orders)
	}
	waitUntil(t, 30*time.Second, func() bool { return acked() >= 500 }, "500 orders acknowledged")

	backup := filepath.Join(t.TempDir(), "backup.db")
	out, err := exec.Command(bin, "backup", "--to", backup, "--database", dsn).CombinedOutput()
	if err != nil {
		t.Fatalf("petstore backup: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^  instant +(\S+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("petstore backup printed no instant:\n%s", out)
	}
	instant, err := time.Parse(time.RFC3339Nano, string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("petstore backup:\n%s", out)
	// Let the stream run on past the backup, then kill the server in the middle of it.
	atBackup := acked()
	waitUntil(t, 30*time.Second, func() bool { return acked() >= atBackup+300 }, "300 more orders acknowledged")
	server.Kill()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()

	// In place too, over the database the killed server left: the database it
	// replaces, write-ahead log and all, is kept whole, every acknowledged order in it.
	checkKept(t, bin, backup, dsn, orders)

	fresh := filepath.Join(t.TempDir(), "fresh", "p.db")
	if out, err := exec.Command(bin, "restore", "--from", backup, "--database", fresh).CombinedOutput(); err != nil {
		t.Fatalf("petstore restore: %v\n%s", err, out)
	}
	addr2 := freeAddr(t)
	startBinary(t, bin, "--addr", addr2, "--database", fresh, "--no-bootstrap", "--rate-limit", "0", "--admin-addr", "off")
	restored := adminClient{t: t, base: "http://" + addr2 + "/v1", key: key}

	before, lost := 0, 0
	for id, o := range orders {
		if !o.placed.Before(instant) {
			continue
		}
		before++
		code, got := restored.call("GET", fmt.Sprintf("/store/orders/%d", id), "")
		if code != http.StatusOK {
			lost++
			t.Errorf("order %d, acknowledged before the backup's instant, is not in the restored shop: %d", id, code)
			continue
		}
		want := string(petstore.Placed)
		if !o.cancelled.IsZero() && o.cancelled.Before(instant) {
			want = string(petstore.Cancelled)
		}
		status := fmt.Sprint(got["status"])
		if int(got["quantity"].(float64)) != o.quantity {
			t.Errorf("order %d: quantity %v, want %d", id, got["quantity"], o.quantity)
		}
		// A cancellation acknowledged after the instant may have committed before it.
		if status != want && (status != string(petstore.Cancelled) || !o.cancelAsked) {
			t.Errorf("order %d: status %s, want %s", id, status, want)
		}
	}
	inCopy := checkRestoredShop(t, fresh, pet, stock, orders)
	after := 0
	for id, o := range orders {
		if !inCopy[id] && !o.placed.Before(instant) {
			after++
		}
	}
	t.Logf("the drill: %d orders acknowledged (%d cancelled), %d of them before the backup's instant %s; "+
		"%d orders in the restored shop (%d never acknowledged: in flight); lost: %d acknowledged before the instant, "+
		"%d acknowledged after it (after the backup, as expected)",
		len(orders), cancelledCount(orders), before, instant.Format(time.RFC3339Nano), len(inCopy), unknownCount(inCopy, orders), lost, after)
}

// checkRestoredShop reads every order of the restored database: each was placed by
// a client of the drill (acknowledged or in flight: the client knows its id only once
// acknowledged, so an order it does not know is one in flight, at most one per
// client), a cancelled one was asked to be, and the stock and the live orders add up.
func checkRestoredShop(t *testing.T, path string, pet int64, stock int, orders map[int64]*drillOrder) (ids map[int64]bool) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ids = map[int64]bool{}
	live, unknown := 0, 0
	for page := (petstore.Page{Limit: 500}); ; {
		list, err := st.Orders(ctx, petstore.OrderFilter{}, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list {
			ids[o.ID] = true
			if o.Status != petstore.Cancelled {
				live += o.Quantity
			}
			known, ok := orders[o.ID]
			switch {
			case !ok:
				unknown++
			case o.Status == petstore.Cancelled && !known.cancelAsked:
				t.Errorf("order %d is cancelled in the restored shop, but no client cancelled it", o.ID)
			}
		}
		if len(list) < page.Limit {
			break
		}
		page.After = list[len(list)-1].ID
	}
	// An order that was in flight when the backup was taken is in it but was never
	// acknowledged (the server was killed before it answered, or the client had not
	// recorded it yet): at most one per client.
	if unknown > 8 {
		t.Errorf("%d orders in the restored shop were never acknowledged, more than the 8 clients had in flight", unknown)
	}
	p, err := st.Pet(ctx, pet)
	if err != nil {
		t.Fatal(err)
	}
	if p.Stock+live != stock {
		t.Errorf("the restored shop has %d in stock and %d in live orders: %d, want %d", p.Stock, live, p.Stock+live, stock)
	}
	return ids
}

func unknownCount(ids map[int64]bool, orders map[int64]*drillOrder) int {
	n := 0
	for id := range ids {
		if orders[id] == nil {
			n++
		}
	}
	return n
}

// checkKept restores backup over the database at path and checks that the database
// it replaced is kept with every order in orders.
func checkKept(t *testing.T, bin, backup, path string, orders map[int64]*drillOrder) {
	t.Helper()
	// The kill left commits in the log, which the kept database must have folded in.
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Errorf("the killed server left no write-ahead log to keep: %v", err)
	}
	out, err := exec.Command(bin, "restore", "--from", backup, "--database", path).CombinedOutput()
	if err != nil {
		t.Fatalf("petstore restore over the killed server's database: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`kept as (\S+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("petstore restore does not say where it kept the old database:\n%s", out)
	}
	kept, err := sqlite.Open(context.Background(), string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	missing := 0
	for id := range orders {
		if _, err := kept.Order(context.Background(), id, 0); err != nil {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged orders are missing from the kept database %s", missing, len(orders), m[1])
	}
}

func cancelledCount(orders map[int64]*drillOrder) int {
	n := 0
	for _, o := range orders {
		if !o.cancelled.IsZero() {
			n++
		}
	}
	return n
}

// send is adminClient.call for many goroutines: it returns its errors rather than
// fail the test, as the server is killed under it.
func send(client *http.Client, api adminClient, method, path, body string) (int, map[string]any, error) {
	req, _ := http.NewRequest(method, api.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+api.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var v map[string]any
	raw, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(raw, &v)
	return res.StatusCode, v, nil
}

// waitUntil polls ok until it holds, or fails the test after within.
func waitUntil(t *testing.T, within time.Duration, ok func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(within); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) || t.Failed() {
			t.Fatalf("not %s within %v", what, within)
		}
	}
}
