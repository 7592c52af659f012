package petcache

import (
	"reflect"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

func TestPetCache(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	rex := petstore.Pet{ID: 7, Name: "Rex", Stock: 3}

	t.Run("a pet put is got until its time is up", func(t *testing.T) {
		c := New(time.Second, 0)
		_, gen, ok := c.Get(7, now)
		if ok {
			t.Fatal("an empty cache had a pet")
		}
		c.Put(rex, gen, now)
		if got, _, ok := c.Get(7, now.Add(999*time.Millisecond)); !ok || !reflect.DeepEqual(got, rex) {
			t.Fatalf("get = %+v, %v", got, ok)
		}
		if _, _, ok := c.Get(7, now.Add(time.Second)); ok {
			t.Fatal("an expired pet was got")
		}
	})
	t.Run("a forgotten pet is gone", func(t *testing.T) {
		c := New(time.Second, 0)
		_, gen, _ := c.Get(7, now)
		c.Put(rex, gen, now)
		c.Forget(7)
		if _, _, ok := c.Get(7, now); ok {
			t.Fatal("a forgotten pet was got")
		}
	})
	t.Run("a write to another pet does not keep a read out of the cache", func(t *testing.T) {
		c := New(time.Second, 0)
		_, gen, _ := c.Get(7, now)
		c.Forget(8)
		c.Put(rex, gen, now)
		if _, _, ok := c.Get(7, now); !ok {
			t.Fatal("a write to pet 8 kept pet 7 out")
		}
	})
	t.Run("a read that raced a write is not cached", func(t *testing.T) {
		c := New(time.Second, 0)
		_, gen, _ := c.Get(7, now) // the read begins
		c.Forget(7)                // a write commits meanwhile
		c.Put(rex, gen, now)       // the read ends with what it read before the write
		if _, _, ok := c.Get(7, now); ok {
			t.Fatal("a read older than a write was cached")
		}
	})
	t.Run("a negative time turns the cache off", func(t *testing.T) {
		c := New(-1, 0)
		_, gen, _ := c.Get(7, now)
		c.Put(rex, gen, now)
		if _, _, ok := c.Get(7, now); ok {
			t.Fatal("the cache is on")
		}
	})
	t.Run("the cache holds at most its maximum", func(t *testing.T) {
		c := New(time.Second, 10)
		for id := range int64(25) {
			_, gen, _ := c.Get(id, now)
			c.Put(petstore.Pet{ID: id}, gen, now)
		}
		if len(c.m) > 10 {
			t.Fatalf("the cache holds %d pets", len(c.m))
		}
		// The latest puts are kept: the oldest made room for them.
		for id := range int64(25) {
			if _, _, ok := c.Get(id, now); ok != (id >= 15) {
				t.Errorf("pet %d cached: %v, want %v", id, ok, id >= 15)
			}
		}
	})
	t.Run("a pet forgotten and put again is never served stale", func(t *testing.T) {
		c := New(time.Second, 3)
		for _, id := range []int64{1, 2, 1} {
			_, gen, _ := c.Get(id, now)
			c.Put(petstore.Pet{ID: id, Stock: int(id)}, gen, now)
			c.Forget(1)
		}
		_, gen, _ := c.Get(1, now)
		c.Put(petstore.Pet{ID: 1, Stock: 9}, gen, now)
		if got, _, ok := c.Get(1, now); ok && got.Stock != 9 {
			t.Fatalf("pet 1 cached with stock %d, want 9 (the last put)", got.Stock)
		}
		if len(c.m) > 3 || len(c.ring) > 3 {
			t.Fatalf("the cache holds %d pets in %d slots, want at most 3", len(c.m), len(c.ring))
		}
	})
	t.Run("a suspended cache keeps nothing until resumed", func(t *testing.T) {
		c := New(time.Second, 0)
		_, gen, _ := c.Get(7, now)
		c.Put(rex, gen, now)
		c.Suspend()
		if _, _, ok := c.Get(7, now); ok {
			t.Fatal("a suspended cache served a pet it had before")
		}
		_, gen, _ = c.Get(7, now)
		c.Put(rex, gen, now)
		if _, _, ok := c.Get(7, now); ok || c.Len() != 0 {
			t.Fatalf("a suspended cache kept a pet (%d held)", c.Len())
		}
		c.Resume()
		_, gen, _ = c.Get(7, now)
		c.Put(rex, gen, now)
		if _, _, ok := c.Get(7, now); !ok {
			t.Fatal("a resumed cache keeps nothing")
		}
	})
	t.Run("a read begun before a resume is not cached", func(t *testing.T) {
		c := New(time.Second, 0)
		c.Suspend()
		_, gen, _ := c.Get(7, now) // the read begins while nobody hears of writes
		c.Resume()                 // a write may have committed before listening began
		c.Put(rex, gen, now)
		if _, _, ok := c.Get(7, now); ok {
			t.Fatal("a read older than the resume was cached")
		}
	})
	t.Run("forgetting all drops every pet and keeps out reads begun before", func(t *testing.T) {
		c := New(time.Second, 0)
		for id := range int64(5) {
			_, gen, _ := c.Get(id, now)
			c.Put(petstore.Pet{ID: id}, gen, now)
		}
		_, gen, _ := c.Get(9, now)
		c.ForgetAll()
		c.Put(petstore.Pet{ID: 9}, gen, now)
		if c.Len() != 0 {
			t.Fatalf("%d pets held after ForgetAll", c.Len())
		}
	})
}

// BenchmarkPetCacheFull puts and gets pets spread over ten times more ids than the
// cache holds: every put into the full cache evicts one, in O(1).
func BenchmarkFull(b *testing.B) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	c := New(time.Minute, 0)
	b.ReportAllocs()
	id := int64(0)
	for b.Loop() {
		id = (id*7919 + 1) % (10 * DefaultSize)
		if _, gen, ok := c.Get(id, now); !ok {
			c.Put(petstore.Pet{ID: id}, gen, now)
		}
	}
}
