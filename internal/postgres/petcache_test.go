package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/postgres/pgtest"
	"github.com/acme-pets/petstore/internal/storetest"
)

// A pet cached for an hour can only show another process's change by its notice (or
// by the cache being dropped): the tests below use such caches to prove the notices,
// and the default one to prove the cache's time.
const noExpiry = time.Hour

// twoProcesses opens A (with the cache time ttl) and B on one new schema, as two
// server processes would (two pools), and a connection of its own that changes rows
// behind both, as psql would; the pet is available with a stock of 5.
func twoProcesses(t *testing.T, ttl time.Duration) (a, b *postgres.DB, sql *pgx.Conn, pet int64) {
	t.Helper()
	ctx := t.Context()
	url := pgtest.Schema(t, pgtest.URL(t))
	open := func(o postgres.Options) *postgres.DB {
		db, err := postgres.OpenWith(ctx, url, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	a = open(postgres.Options{PetCacheTTL: ttl})
	b = open(postgres.Options{})
	sql, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sql.Close(context.Background()) })
	// Set up through A, whose own writes send A no notice: B has none on their way
	// to A that could drop the pet A caches next.
	_, pet = setUpPet(t, a, 5)
	if postgres.PetCacheSuspendedForTest(a) {
		t.Fatal("A's cache is suspended: A does not listen")
	}
	return a, b, sql, pet
}

// eventually polls A's read of the pet until ok says it shows the change, and fails
// when that takes longer than within.
func eventually(t *testing.T, a *postgres.DB, pet int64, within time.Duration, ok func(petstore.Pet, error) bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		p, err := a.Pet(t.Context(), pet)
		if ok(p, err) {
			return time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("after %v the other process still reads %+v, %v", time.Since(start), p, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// cached reads the pet in A, has sql change its stock behind A's back, and reports
// whether A still answers the stock it had: whether A serves the pet from memory.
func cached(t *testing.T, a *postgres.DB, sql *pgx.Conn, pet int64) bool {
	t.Helper()
	before, err := a.Pet(t.Context(), pet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sql.Exec(t.Context(), `UPDATE pets SET stock = stock + 1 WHERE id = $1`, pet); err != nil {
		t.Fatal(err)
	}
	after, err := a.Pet(t.Context(), pet)
	if err != nil {
		t.Fatal(err)
	}
	return after.Stock == before.Stock
}

// Every write through a store that changes what Pet answers reaches the other
// processes' caches by its notice, in milliseconds; A's cache here would keep the pet
// for an hour otherwise.
func TestAPetChangedByAnotherProcessShowsByItsNotice(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, b *postgres.DB, pet, account int64)
		shows  func(petstore.Pet, error) bool
	}{
		{"a new stock", func(t *testing.T, b *postgres.DB, pet, _ int64) {
			if _, err := b.SetInventory(t.Context(), pet, 9); err != nil {
				t.Fatal(err)
			}
		}, func(p petstore.Pet, _ error) bool { return p.Stock == 9 }},
		{"a new name", func(t *testing.T, b *postgres.DB, pet, _ int64) {
			_, err := b.UpdatePet(t.Context(), pet, func(f petstore.PetFields) (petstore.PetFields, error) {
				f.Name = "Max"
				return f, nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}, func(p petstore.Pet, _ error) bool { return p.Name == "Max" }},
		{"an order placed", func(t *testing.T, b *postgres.DB, pet, account int64) {
			if _, err := b.PlaceOrder(t.Context(), petstore.NewOrder{AccountID: account, PetID: pet, Quantity: 2}); err != nil {
				t.Fatal(err)
			}
		}, func(p petstore.Pet, _ error) bool { return p.Stock == 4 }}, // 6 (see cached) less 2
		{"an order cancelled", func(t *testing.T, b *postgres.DB, pet, account int64) {
			o, err := b.PlaceOrder(t.Context(), petstore.NewOrder{AccountID: account, PetID: pet, Quantity: 2})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.CancelOrder(t.Context(), o.Order.ID, account); err != nil {
				t.Fatal(err)
			}
		}, func(p petstore.Pet, _ error) bool { return p.Stock == 6 }}, // as sql left it; A has 5
		{"a photo added", func(t *testing.T, b *postgres.DB, pet, _ int64) {
			if _, err := b.AddPetPhoto(t.Context(), pet, petstore.Photo{ID: "ph_1", Width: 1, Height: 1, ContentType: "image/png"}); err != nil {
				t.Fatal(err)
			}
		}, func(p petstore.Pet, _ error) bool { return len(p.Photos) == 1 }},
		{"the pet deleted", func(t *testing.T, b *postgres.DB, pet, _ int64) {
			if err := b.DeletePet(t.Context(), pet); err != nil {
				t.Fatal(err)
			}
		}, func(_ petstore.Pet, err error) bool { return err != nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b, sql, pet := twoProcesses(t, noExpiry)
			if !cached(t, a, sql, pet) {
				t.Fatal("A does not cache the pet")
			}
			account, _, err := b.AccountByEmail(t.Context(), "ada@example.com")
			if err != nil {
				t.Fatal(err)
			}
			c.change(t, b, pet, account.ID)
			took := eventually(t, a, pet, 5*time.Second, c.shows)
			t.Logf("A saw the change after %v", took)
		})
	}
}

// A change that no notice tells (here made with SQL behind the stores, as a crashed
// process's or psql's would be) shows within the cache's time: the hard bound.
func TestAPetChangedWithoutNoticeShowsWithinTheCacheTime(t *testing.T) {
	a, _, sql, pet := twoProcesses(t, 0)
	if _, err := a.Pet(t.Context(), pet); err != nil { // now cached in A
		t.Fatal(err)
	}
	if _, err := sql.Exec(t.Context(), `UPDATE pets SET stock = 9 WHERE id = $1`, pet); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	for {
		began := time.Now()
		p, err := a.Pet(t.Context(), pet)
		if err != nil {
			t.Fatal(err)
		}
		if p.Stock == 9 {
			t.Logf("seen by a read begun %v after the change (bound %v)", began.Sub(changed), postgres.DefaultPetCacheTTL)
			return
		}
		// A pet is cached for the cache's time from before its read began, which was
		// before the change: no read begun later may find it.
		if began.Sub(changed) > postgres.DefaultPetCacheTTL {
			t.Fatalf("a read begun %v after the change shows the stock %d", began.Sub(changed), p.Stock)
		}
		time.Sleep(time.Millisecond)
	}
}

// A listener whose connection is lost drops the cache at once and caches nothing
// until it listens again, since notices sent meanwhile are lost; it then listens
// again on a new connection, and caches.
func TestALostListenerDropsTheCacheAndListensAgain(t *testing.T) {
	a, b, sql, pet := twoProcesses(t, noExpiry)
	if !cached(t, a, sql, pet) {
		t.Fatal("A does not cache the pet")
	}
	// A serves a stale stock now (sql told nobody): only dropping the cache shows the
	// new one, with an hour's cache time.
	stale, err := a.Pet(t.Context(), pet)
	if err != nil {
		t.Fatal(err)
	}
	old := postgres.PetListenerPIDForTest(a)
	var ended bool
	if err := sql.QueryRow(t.Context(), `SELECT pg_terminate_backend($1)`, old).Scan(&ended); err != nil || !ended {
		t.Fatalf("terminate A's listener %d: %v, %v", old, ended, err)
	}
	eventually(t, a, pet, 5*time.Second, func(p petstore.Pet, _ error) bool { return p.Stock == stale.Stock+1 })

	deadline := time.Now().Add(10 * time.Second)
	for pid := postgres.PetListenerPIDForTest(a); pid == 0 || pid == old || postgres.PetCacheSuspendedForTest(a); pid = postgres.PetListenerPIDForTest(a) {
		if time.Now().After(deadline) {
			t.Fatalf("A does not listen again (listener %d, was %d)", pid, old)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !cached(t, a, sql, pet) {
		t.Fatal("A listens again but does not cache")
	}
	if _, err := b.SetInventory(t.Context(), pet, 42); err != nil {
		t.Fatal(err)
	}
	eventually(t, a, pet, 5*time.Second, func(p petstore.Pet, _ error) bool { return p.Stock == 42 })
}

// BenchmarkCachedPet reads one pet by id, as GET /v1/pets/{id} does: from the cache
// ("cached") and, with the cache off, from the database ("uncached").
func BenchmarkCachedPet(b *testing.B) {
	url := pgtest.URL(b)
	for _, c := range []struct {
		name string
		ttl  time.Duration
	}{{"cached", 0}, {"uncached", -1}} {
		b.Run(c.name, func(b *testing.B) {
			db := pgtest.OpenWith(b, url, postgres.Options{PetCacheTTL: c.ttl})
			ctx := context.Background()
			cat, err := db.CreateCategory(ctx, petstore.Category{Name: "Dogs"})
			if err != nil {
				b.Fatal(err)
			}
			p, err := db.CreatePet(ctx, petstore.PetFields{Name: "Rex", CategoryID: cat.ID, Status: petstore.Available, Price: storetest.Price(1999)})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := db.Pet(ctx, p.ID); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
