package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/s3test"
	"github.com/acme-pets/petstore/internal/servetest"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// replicaTargets are the kinds of replica the tests write: a directory, and a bucket
// of a real S3-compatible server (SeaweedFS, internal/s3test) that the test starts.
// The S3 keys reach the binary through AWS_* variables, as in production.
var replicaTargets = map[string]func(t *testing.T) string{
	"file": func(t *testing.T) string {
		return (&url.URL{Scheme: "file", Path: filepath.Join(t.TempDir(), "replica")}).String()
	},
	"s3": func(t *testing.T) string {
		s := s3test.Start(t)
		for _, kv := range s.Env() {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
		// Litestream hands the AWS SDK an HTTP client of its own, to which the SDK
		// cannot add AWS_CA_BUNDLE's certificates: it refuses to start with it set
		// (see docs/OPERATING.md).
		t.Setenv("AWS_CA_BUNDLE", "")
		return "s3://" + s.Bucket + "/petstore?endpoint=" + url.QueryEscape(s.Endpoint)
	},
}

const replStock = 1_000_000

// serveReplicated makes a database with an admin key and serves it with args.
func serveReplicated(t *testing.T, bin, dsn string, args ...string) (key string, base string, stop func(time.Duration), kill func()) {
	t.Helper()
	if _, err := os.Stat(dsn); err != nil {
		out, err := exec.Command(bin, "keys", "create", "--create", "--email", "ops@example.com", "--role", "admin", "--database", dsn).Output()
		if err != nil {
			t.Fatalf("keys create: %v", err)
		}
		key = strings.TrimSpace(string(out))
	}
	addr := freeAddr(t)
	logs, err := os.Create(filepath.Join(t.TempDir(), "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close() // the process has its own copy
	p, err := servetest.Serve(bin, logs, 30*time.Second, append([]string{"--addr", addr, "--database", dsn, "--no-bootstrap", "--rate-limit", "0", "--admin-addr", "off"}, args...)...)
	if err != nil {
		b, _ := os.ReadFile(logs.Name())
		t.Fatalf("%v; its log:\n%s", err, b)
	}
	t.Cleanup(p.Kill)
	return key, "http://" + addr + "/v1", p.Stop, p.Kill
}

// replCall calls the API with key; v, when not nil, receives the JSON answer.
func replCall(base, key, method, path, body string, v any) (int, error) {
	r, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+key)
	r.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if v != nil {
		json.NewDecoder(res.Body).Decode(v)
	}
	return res.StatusCode, nil
}

// stockedPet makes a category and a pet with replStock in stock.
func stockedPet(t *testing.T, base, key string) int64 {
	t.Helper()
	var cat, pet struct{ ID int64 }
	if code, err := replCall(base, key, "POST", "/categories", `{"name":"Replicated"}`, &cat); code != 201 {
		t.Fatalf("category: %d %v", code, err)
	}
	if code, err := replCall(base, key, "POST", "/pets", fmt.Sprintf(`{"name":"Rex","categoryId":%d,"price":1999}`, cat.ID), &pet); code != 201 {
		t.Fatalf("pet: %d %v", code, err)
	}
	if code, err := replCall(base, key, "PUT", fmt.Sprintf("/store/inventory/%d", pet.ID), fmt.Sprintf(`{"quantity":%d}`, replStock), nil); code != 200 {
		t.Fatalf("stock: %d %v", code, err)
	}
	return pet.ID
}

// ackedOrder is an order answered 201, and when.
type ackedOrder struct {
	quantity int
	at       time.Time
}

// streamOrders places orders of pet from workers until stop is closed or the server
// is gone, and returns every acknowledged one.
func streamOrders(t *testing.T, base, key string, petID int64, workers int, stop <-chan struct{}) func() map[int64]ackedOrder {
	var (
		mu    sync.Mutex
		acked = map[int64]ackedOrder{}
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := 1 + (w+i)%3
				var o struct{ ID int64 }
				code, err := replCall(base, key, "POST", "/store/orders", fmt.Sprintf(`{"petId":%d,"quantity":%d}`, petID, q), &o)
				if err != nil {
					return // the server is gone
				}
				at := time.Now()
				if code != http.StatusCreated {
					t.Errorf("order: %d", code)
					return
				}
				mu.Lock()
				acked[o.ID] = ackedOrder{q, at}
				mu.Unlock()
			}
		}()
	}
	return func() map[int64]ackedOrder {
		wg.Wait()
		return acked
	}
}

// restoreReplica runs `petstore replica restore` into a new file and returns it.
func restoreReplica(t *testing.T, bin, from string, at time.Time) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "restored.db")
	args := []string{"replica", "restore", "--from", from, "--to", to}
	if !at.IsZero() {
		args = append(args, "--timestamp", at.UTC().Format(time.RFC3339Nano))
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("replica restore: %v\n%s", err, out)
	}
	return to
}

// storedOrders opens the database at dsn and returns its orders' quantities by id
// and the stock of petID.
func storedOrders(t *testing.T, dsn string, petID int64) (orders map[int64]int, stock int) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	orders = map[int64]int{}
	for page := (petstore.Page{Limit: 500}); ; {
		list, err := st.Orders(ctx, petstore.OrderFilter{}, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list {
			if o.PetID != petID {
				t.Errorf("order %d is of pet %d, want %d", o.ID, o.PetID, petID)
			}
			orders[o.ID] = o.Quantity
		}
		if len(list) < page.Limit {
			break
		}
		page.After = list[len(list)-1].ID
	}
	p, err := st.Pet(ctx, petID)
	if err != nil {
		t.Fatal(err)
	}
	return orders, p.Stock
}

// TestReplicaKeepsAcknowledgedOrdersAfterTheDiskIsLost streams orders at the real
// binary replicating its database, kills it with SIGKILL mid-stream, removes the
// database and everything beside it (the disk is lost), restores the replica into a
// new directory and serves that. Every order acknowledged longer than two intervals
// (one to read the WAL, one to ship it) and a margin before the kill must be there,
// and the stock and the orders must add up to what the pet had.
func TestReplicaKeepsAcknowledgedOrdersAfterTheDiskIsLost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildPetstore(t)
	const interval, margin = time.Second, time.Second
	for name, target := range replicaTargets {
		t.Run(name, func(t *testing.T) {
			replicaURL := target(t)
			disk := t.TempDir()
			dsn := filepath.Join(disk, "p.db")
			key, base, _, kill := serveReplicated(t, bin, dsn, "--replicate-to", replicaURL, "--replicate-interval", interval.String())
			petID := stockedPet(t, base, key)

			stop := make(chan struct{})
			wait := streamOrders(t, base, key, petID, 8, stop)
			// Stream for several intervals, so that orders are acknowledged before,
			// during and after several syncs.
			started := time.Now()
			for time.Since(started) < 5*interval {
				if code, err := replCall(base, key, "GET", "/store/orders?limit=1", "", nil); code != 200 {
					t.Fatalf("list orders while streaming: %d %v", code, err)
				}
			}
			killedAt := time.Now()
			kill()
			close(stop)
			acked := wait()
			if err := os.RemoveAll(disk); err != nil {
				t.Fatal(err)
			}

			restored := restoreReplica(t, bin, replicaURL, time.Time{})
			// The restored file serves: it opens, migrates and answers.
			_, rbase, rstop, _ := serveReplicated(t, bin, restored)
			if code, err := replCall(rbase, key, "GET", fmt.Sprintf("/pets/%d", petID), "", nil); code != 200 {
				t.Fatalf("the restored database's pet: %d %v", code, err)
			}
			rstop(10 * time.Second)

			orders, stock := storedOrders(t, restored, petID)
			bound := killedAt.Add(-2*interval - margin)
			lost, lostOldest := 0, killedAt
			for id, o := range acked {
				q, ok := orders[id]
				switch {
				case ok && q != o.quantity:
					t.Errorf("order %d has quantity %d, want %d", id, q, o.quantity)
				case !ok && o.at.Before(bound):
					t.Errorf("order %d, acknowledged %v before the kill, is not in the replica", id, killedAt.Sub(o.at))
				}
				if !ok {
					lost++
					if o.at.Before(lostOldest) {
						lostOldest = o.at
					}
				}
			}
			ordered := 0
			for _, q := range orders {
				ordered += q
			}
			if stock+ordered != replStock {
				t.Errorf("%d in stock and %d in %d orders: %d, want %d", stock, ordered, len(orders), stock+ordered, replStock)
			}
			t.Logf("%s: %d orders acknowledged in %v, %d restored; %d acknowledged orders lost, the oldest acknowledged %.2fs before the kill (bound %v)",
				name, len(acked), killedAt.Sub(started).Round(time.Millisecond), len(orders), lost, killedAt.Sub(lostOldest).Seconds(), 2*interval+margin)
		})
	}
}

// TestReplicaRestoresToAPointInTime places orders, notes the time once the replica
// holds them, places more, and restores the replica as of that time: the first
// orders are there and not the others; restored to its latest, it has both.
func TestReplicaRestoresToAPointInTime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildPetstore(t)
	for name, target := range replicaTargets {
		t.Run(name, func(t *testing.T) {
			replicaURL := target(t)
			dsn := filepath.Join(t.TempDir(), "p.db")
			key, base, stop, _ := serveReplicated(t, bin, dsn, "--replicate-to", replicaURL, "--replicate-interval", "200ms")
			petID := stockedPet(t, base, key)
			place := func(n int) []int64 {
				var ids []int64
				for range n {
					var o struct{ ID int64 }
					if code, err := replCall(base, key, "POST", "/store/orders", fmt.Sprintf(`{"petId":%d,"quantity":1}`, petID), &o); code != 201 {
						t.Fatalf("order: %d %v", code, err)
					}
					ids = append(ids, o.ID)
				}
				return ids
			}
			before := place(5)
			at := waitReplicated(t, bin, replicaURL, before[len(before)-1])
			after := place(5)
			stop(10 * time.Second) // a clean stop ships the last writes

			for _, c := range []struct {
				name         string
				at           time.Time
				want, absent []int64
			}{
				{"as of the time", at, before, after},
				{"latest", time.Time{}, append(append([]int64{}, before...), after...), nil},
			} {
				orders, stock := storedOrders(t, restoreReplica(t, bin, replicaURL, c.at), petID)
				for _, id := range c.want {
					if _, ok := orders[id]; !ok {
						t.Errorf("%s: order %d is missing", c.name, id)
					}
				}
				for _, id := range c.absent {
					if _, ok := orders[id]; ok {
						t.Errorf("%s: order %d, placed after the time, is there", c.name, id)
					}
				}
				if stock+len(orders) != replStock {
					t.Errorf("%s: %d in stock and %d orders of 1, want %d", c.name, stock, len(orders), replStock)
				}
			}
		})
	}
}

// waitReplicated waits until a restore of the replica holds order id, and returns
// the time it found it: the replica held the order then.
func waitReplicated(t *testing.T, bin, replicaURL string, id int64) time.Time {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		st, err := sqlite.Open(context.Background(), restoreReplica(t, bin, replicaURL, time.Time{}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.Order(context.Background(), id, 0)
		st.Close()
		if err == nil {
			return time.Now()
		}
	}
	t.Fatalf("order %d is not in the replica within 20s", id)
	return time.Time{}
}
