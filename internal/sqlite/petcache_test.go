package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

func TestPetCache(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	rex := petstore.Pet{ID: 7, Name: "Rex", Stock: 3}

	t.Run("a pet put is got until its time is up", func(t *testing.T) {
		c := newPetCache(time.Second)
		_, gen, ok := c.get(7, now)
		if ok {
			t.Fatal("an empty cache had a pet")
		}
		c.put(rex, gen, now)
		if got, _, ok := c.get(7, now.Add(999*time.Millisecond)); !ok || !reflect.DeepEqual(got, rex) {
			t.Fatalf("get = %+v, %v", got, ok)
		}
		if _, _, ok := c.get(7, now.Add(time.Second)); ok {
			t.Fatal("an expired pet was got")
		}
	})
	t.Run("a forgotten pet is gone", func(t *testing.T) {
		c := newPetCache(time.Second)
		_, gen, _ := c.get(7, now)
		c.put(rex, gen, now)
		c.forget(7)
		if _, _, ok := c.get(7, now); ok {
			t.Fatal("a forgotten pet was got")
		}
	})
	t.Run("a write to another pet does not keep a read out of the cache", func(t *testing.T) {
		c := newPetCache(time.Second)
		_, gen, _ := c.get(7, now)
		c.forget(8)
		c.put(rex, gen, now)
		if _, _, ok := c.get(7, now); !ok {
			t.Fatal("a write to pet 8 kept pet 7 out")
		}
	})
	t.Run("a read that raced a write is not cached", func(t *testing.T) {
		c := newPetCache(time.Second)
		_, gen, _ := c.get(7, now) // the read begins
		c.forget(7)                // a write commits meanwhile
		c.put(rex, gen, now)       // the read ends with what it read before the write
		if _, _, ok := c.get(7, now); ok {
			t.Fatal("a read older than a write was cached")
		}
	})
	t.Run("a negative time turns the cache off", func(t *testing.T) {
		c := newPetCache(-1)
		_, gen, _ := c.get(7, now)
		c.put(rex, gen, now)
		if _, _, ok := c.get(7, now); ok {
			t.Fatal("the cache is on")
		}
	})
	t.Run("the cache holds at most its maximum", func(t *testing.T) {
		c := newPetCache(time.Second)
		c.max = 10
		for id := range int64(25) {
			_, gen, _ := c.get(id, now)
			c.put(petstore.Pet{ID: id}, gen, now)
		}
		if len(c.m) > 10 {
			t.Fatalf("the cache holds %d pets", len(c.m))
		}
		// The latest puts are kept: the oldest made room for them.
		for id := range int64(25) {
			if _, _, ok := c.get(id, now); ok != (id >= 15) {
				t.Errorf("pet %d cached: %v, want %v", id, ok, id >= 15)
			}
		}
	})
	t.Run("a pet forgotten and put again is never served stale", func(t *testing.T) {
		c := newPetCache(time.Second)
		c.max = 3
		for _, id := range []int64{1, 2, 1} {
			_, gen, _ := c.get(id, now)
			c.put(petstore.Pet{ID: id, Stock: int(id)}, gen, now)
			c.forget(1)
		}
		_, gen, _ := c.get(1, now)
		c.put(petstore.Pet{ID: 1, Stock: 9}, gen, now)
		if got, _, ok := c.get(1, now); ok && got.Stock != 9 {
			t.Fatalf("pet 1 cached with stock %d, want 9 (the last put)", got.Stock)
		}
		if len(c.m) > 3 || len(c.ring) > 3 {
			t.Fatalf("the cache holds %d pets in %d slots, want at most 3", len(c.m), len(c.ring))
		}
	})
}

// BenchmarkPetCacheFull puts and gets pets spread over ten times more ids than the
// cache holds: every put into the full cache evicts one, in O(1).
func BenchmarkPetCacheFull(b *testing.B) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	c := newPetCache(time.Minute)
	b.ReportAllocs()
	id := int64(0)
	for b.Loop() {
		id = (id*7919 + 1) % (10 * DefaultPetCacheSize)
		if _, gen, ok := c.get(id, now); !ok {
			c.put(petstore.Pet{ID: id}, gen, now)
		}
	}
}

// A full database (here: capped by max_page_count, as a full disk would stop it) is a
// passing failure: the store reports it unavailable, so the API answers 503.
func TestAFullDatabaseIsUnavailable(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.CreateCategory(ctx, petstore.Category{Name: "Dogs"})
	if err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := db.write.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		t.Fatal(err)
	}
	for i := range 10_000 {
		_, err = db.CreatePet(ctx, petstore.PetFields{Name: fmt.Sprintf("A pet with a long name to fill pages %d", i), CategoryID: c.ID, Status: petstore.Available})
		if err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("10,000 pets fitted in a full database")
	}
	if !db.Unavailable(err) {
		t.Errorf("a full database: %v, not reported unavailable", err)
	}
	if db.Unavailable(petstore.Invalid("name", "x")) || db.Unavailable(errors.New("other")) {
		t.Error("errors that are not the database's are reported unavailable")
	}
}
