package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
	"github.com/acme-pets/petstore/internal/storetest"
)

func open(t *testing.T) *sqlite.DB {
	t.Helper()
	return openWith(t, storetest.Hooks{})
}

func openWith(t *testing.T, h storetest.Hooks) *sqlite.DB {
	t.Helper()
	db, err := sqlite.OpenWith(context.Background(), filepath.Join(t.TempDir(), "petstore.db"), sqlite.Options{Now: h.Now})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if h.BeforeCommit != nil {
		sqlite.SetBeforeCommitForTest(db, h.BeforeCommit)
	}
	sqlite.SetPurgeChunkForTest(db, h.PurgeChunk, h.Purged)
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return db
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, h storetest.Hooks) petstore.Store { return openWith(t, h) })
}

func TestPragmasAreSetOnEveryConnection(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	pools := map[string]*sql.DB{"writer": sqlite.WriterForTest(db), "reader": sqlite.ReaderForTest(db)}
	for name, pool := range pools {
		t.Run("the "+name+" has them", func(t *testing.T) {
			// Hold several connections at once, so that more than one is checked.
			var conns []*sql.Conn
			for range 2 {
				if name == "writer" && len(conns) == 1 {
					break
				}
				c, err := pool.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, c)
			}
			for _, c := range conns {
				want := map[string]string{
					"foreign_keys": "1",
					"journal_mode": "wal",
					"busy_timeout": "5000",
					"synchronous":  "2", // FULL: a commit survives a power cut
				}
				for pragma, w := range want {
					var got string
					if err := c.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
						t.Fatalf("PRAGMA %s: %v", pragma, err)
					}
					if got != w {
						t.Errorf("PRAGMA %s = %s, want %s", pragma, got, w)
					}
				}
				c.Close()
			}
		})
	}
}

func TestTheReaderCannotWrite(t *testing.T) {
	db := open(t)
	_, err := sqlite.ReaderForTest(db).Exec(`INSERT INTO categories (name, name_lower) VALUES ('x', 'x')`)
	if err == nil {
		t.Fatal("a write through the read pool succeeded")
	}
}

func TestWriteTransactionsBeginImmediate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "petstore.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := sqlite.WriterForTest(db).BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// A second connection outside the pool cannot take the write lock while the
	// transaction holds it, even though the transaction has not written yet.
	other, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec(`BEGIN IMMEDIATE`); err == nil {
		other.Exec(`ROLLBACK`)
		t.Fatal("another connection took the write lock during a write transaction")
	}
}

func TestOpenAgainKeepsTheData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "petstore.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCategory(ctx, petstore.Category{Name: "Dogs"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	got, err := db.Category(ctx, c.ID)
	if err != nil || got != c {
		t.Fatalf("Category(%d) = %+v, %v; want %+v", c.ID, got, err, c)
	}
}

func TestStatsCountBothPools(t *testing.T) {
	db := open(t)
	if err := db.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := db.Stats()
	if s.Writer.MaxOpenConnections != 1 {
		t.Errorf("writer max open connections = %d, want 1", s.Writer.MaxOpenConnections)
	}
	if s.Reader.MaxOpenConnections < 4 {
		t.Errorf("reader max open connections = %d, want at least 4", s.Reader.MaxOpenConnections)
	}
}

func TestTimesRoundTripToTheNanosecond(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	a, err := db.CreateAccount(ctx, "ada@example.com", "h", petstore.Customer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCategory(ctx, petstore.Category{Name: "Dogs"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.CreatePet(ctx, petstore.PetFields{Name: "Rex", CategoryID: c.ID, Status: petstore.Available, Price: storetest.Price(1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetInventory(ctx, p.ID, 1); err != nil {
		t.Fatal(err)
	}
	ship := time.Date(2031, 2, 3, 4, 5, 6, 123456789, time.FixedZone("", -7*3600))
	placed, err := db.PlaceOrder(ctx, petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: 1, ShipDate: &ship})
	if err != nil {
		t.Fatal(err)
	}
	o := placed.Order
	got, err := db.Order(ctx, o.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if *got.ShipDate != ship.UTC() || got.CreatedAt != o.CreatedAt {
		t.Errorf("read ship date %v, created %v; want %v, %v", got.ShipDate, got.CreatedAt, ship.UTC(), o.CreatedAt)
	}
}

func TestAPanicInAnUpdateDoesNotBlockLaterWrites(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	c, err := db.CreateCategory(ctx, petstore.Category{Name: "Dogs"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.CreatePet(ctx, petstore.PetFields{Name: "Rex", CategoryID: c.ID, Status: petstore.Available})
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() { recover() }()
		db.UpdatePet(ctx, p.ID, func(petstore.PetFields) (petstore.PetFields, error) { panic("boom") })
	}()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := db.SetInventory(ctx, p.ID, 3); err != nil {
		t.Fatalf("a write after the panic: %v", err)
	}
}

// BenchmarkPlaceOrder measures batched order placement (see storetest.BenchPlacement).
func BenchmarkPlaceOrder(b *testing.B) {
	storetest.BenchPlacement(b, func(b *testing.B) petstore.Store {
		db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "petstore.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	})
}

// Pets read by id are cached: a change made through the same DB shows at once (the
// suite checks every kind of change), and one made by another process sharing the
// file shows within DefaultPetCacheTTL.
func TestAPetChangedByAnotherProcessShowsWithinTheCacheTime(t *testing.T) {
	ctx := context.Background()
	dbs := openShared(t, 2)
	c, err := dbs[0].CreateCategory(ctx, petstore.Category{Name: "Dogs"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := dbs[0].CreatePet(ctx, petstore.PetFields{Name: "Rex", CategoryID: c.ID, Status: petstore.Available})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dbs[0].Pet(ctx, p.ID); err != nil { // now cached in dbs[0]
		t.Fatal(err)
	}
	if _, err := dbs[1].SetInventory(ctx, p.ID, 9); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	if got, _ := dbs[1].Pet(ctx, p.ID); got.Stock != 9 {
		t.Fatalf("the process that changed the pet reads a stock of %d", got.Stock)
	}
	for {
		got, err := dbs[0].Pet(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Stock == 9 {
			break
		}
		// The cache's time plus slack for a loaded machine.
		if time.Since(changed) > sqlite.DefaultPetCacheTTL+time.Second {
			t.Fatalf("after %v the other process still reads a stock of %d", time.Since(changed), got.Stock)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSharedDatabase(t *testing.T) {
	storetest.Shared(t, func(t *testing.T, n int) []petstore.Store {
		var stores []petstore.Store
		for _, db := range openShared(t, n) {
			stores = append(stores, db)
		}
		return stores
	})
}

// openShared opens n DBs on one new file at once: n server processes starting
// together on a shared database.
func openShared(t *testing.T, n int) []*sqlite.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "petstore.db")
	dbs := make([]*sqlite.DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = sqlite.Open(context.Background(), path)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		t.Cleanup(func() { dbs[i].Close() })
	}
	return dbs
}

// BenchmarkNameSearch measures the name filter on small and large catalogues (see
// storetest.BenchNameSearch).
func BenchmarkNameSearch(b *testing.B) {
	storetest.BenchNameSearch(b, func(b *testing.B) petstore.Store {
		db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "petstore.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	}, nil, 1000, 100000)
}

func TestMustExistRefusesAMissingFileAndMakesNone(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "petstore.db")
	if db, err := sqlite.OpenWith(ctx, path, sqlite.Options{MustExist: true}); !errors.Is(err, sqlite.ErrNoDatabase) {
		if db != nil {
			db.Close()
		}
		t.Fatalf("a missing file opened with MustExist: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused open left a file behind: %v", err)
	}
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = sqlite.OpenWith(ctx, path, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatalf("an existing file refused: %v", err)
	}
	db.Close()
}
