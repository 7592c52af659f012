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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/postgres/pgtest"
	"github.com/acme-pets/petstore/internal/servetest"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// built is the binary that the tests of the real process run. A build links the whole
// service (seconds, each time), so it is built once per run of the tests, into a
// directory TestMain removes; the tests only run it.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildPetstore returns the binary, built on the first call.
func buildPetstore(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "petstore-cmd-test-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "petstore")
		built.err = servetest.Build(context.Background(), built.path)
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// startBinary runs `petstore serve` with args and waits until it answers; the test's
// end kills it.
func startBinary(t *testing.T, bin string, args ...string) *servetest.Process {
	t.Helper()
	p, err := servetest.Serve(bin, io.Discard, 30*time.Second, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p
}

// TestAnAcknowledgedOrderSurvivesKill9 streams orders at the real binary, kills it
// with SIGKILL mid-stream, and checks the database: every order answered 201 is there
// with its quantity, and the stock and the orders add up to what the pet had. It shows
// that a 201 is only sent once the order's batch has committed; what the operating
// system keeps of a commit across a power cut rests on synchronous=FULL (SQLite, see
// TestPragmasAreSetOnEveryConnection) and synchronous_commit (PostgreSQL), which a
// killed process cannot test.
func TestAnAcknowledgedOrderSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildPetstore(t)
	stores := map[string]func(t *testing.T) (dsn string, open func() petstore.Store){
		"sqlite": func(t *testing.T) (string, func() petstore.Store) {
			dsn := filepath.Join(t.TempDir(), "p.db")
			return dsn, func() petstore.Store {
				db, err := sqlite.Open(context.Background(), dsn)
				if err != nil {
					t.Fatal(err)
				}
				return db
			}
		},
		"postgres": func(t *testing.T) (string, func() petstore.Store) {
			dsn := pgtest.Schema(t, pgtest.URL(t))
			return dsn, func() petstore.Store {
				db, err := postgres.Open(context.Background(), dsn)
				if err != nil {
					t.Fatal(err)
				}
				return db
			}
		},
	}
	for name, setUp := range stores {
		t.Run(name, func(t *testing.T) {
			dsn, open := setUp(t)
			out, err := exec.Command(bin, "keys", "create", "--create", "--email", "ops@example.com", "--role", "admin", "--database", dsn).Output()
			if err != nil {
				t.Fatalf("keys create: %v", err)
			}
			key := strings.TrimSpace(string(out))
			addr := freeAddr(t)
			cmd := startBinary(t, bin, "--addr", addr, "--database", dsn, "--no-bootstrap", "--rate-limit", "0")
			base := "http://" + addr + "/v1"
			call := func(method, path, body string, header ...string) (int, map[string]any, error) {
				r, _ := http.NewRequest(method, base+path, strings.NewReader(body))
				r.Header.Set("Authorization", "Bearer "+key)
				r.Header.Set("Content-Type", "application/json")
				for i := 0; i+1 < len(header); i += 2 {
					r.Header.Set(header[i], header[i+1])
				}
				res, err := http.DefaultClient.Do(r)
				if err != nil {
					return 0, nil, err
				}
				defer res.Body.Close()
				var v map[string]any
				json.NewDecoder(res.Body).Decode(&v)
				return res.StatusCode, v, nil
			}
			_, cat, _ := call("POST", "/categories", `{"name":"Crash"}`)
			_, pet, _ := call("POST", "/pets", fmt.Sprintf(`{"name":"Rex","categoryId":%v,"price":1999}`, cat["id"]))
			const stock = 1_000_000
			if code, _, err := call("PUT", fmt.Sprintf("/store/inventory/%v", pet["id"]), fmt.Sprintf(`{"quantity":%d}`, stock)); code != 200 {
				t.Fatalf("set stock: %d %v", code, err)
			}
			petID := int64(pet["id"].(float64))

			var (
				mu    sync.Mutex
				acked = map[int64]int{} // order id → quantity, of every 201
				wg    sync.WaitGroup
			)
			for w := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						q := 1 + (w+i)%3
						var hdr []string
						if i%2 == 0 {
							hdr = []string{"Idempotency-Key", fmt.Sprintf("w%d-%d", w, i)}
						}
						code, o, err := call("POST", "/store/orders", fmt.Sprintf(`{"petId":%d,"quantity":%d}`, petID, q), hdr...)
						if err != nil {
							return // the server is gone
						}
						if code != http.StatusCreated {
							t.Errorf("order: %d %v", code, o)
							return
						}
						mu.Lock()
						acked[int64(o["id"].(float64))] = q
						mu.Unlock()
					}
				}()
			}
			// Kill once a few hundred orders are acknowledged, in the middle of the stream.
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				mu.Lock()
				n := len(acked)
				mu.Unlock()
				if n >= 300 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("only %d orders acknowledged in 20 s", n)
				}
			}
			cmd.Kill()
			wg.Wait()

			st := open()
			defer st.Close()
			ctx := context.Background()
			mu.Lock()
			defer mu.Unlock()
			for id, q := range acked {
				o, err := st.Order(ctx, id, 0)
				if err != nil {
					t.Errorf("acknowledged order %d: %v", id, err)
					continue
				}
				if o.Quantity != q || o.PetID != petID {
					t.Errorf("acknowledged order %d is %+v, want %d of pet %d", id, o, q, petID)
				}
			}
			stored, ordered := 0, 0
			for page := (petstore.Page{Limit: 100}); ; {
				list, err := st.Orders(ctx, petstore.OrderFilter{}, page)
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range list {
					stored++
					ordered += o.Quantity
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
			if p.Stock+ordered != stock {
				t.Errorf("%d in stock and %d in %d orders: %d, want %d", p.Stock, ordered, stored, p.Stock+ordered, stock)
			}
			t.Logf("%d orders acknowledged, %d stored when the server was killed", len(acked), stored)
		})
	}
}
