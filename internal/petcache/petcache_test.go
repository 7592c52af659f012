package petcache

import (
	"context"
	"errors"
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

func TestLoad(t *testing.T) {
	rex := petstore.Pet{ID: 7, Name: "Rex", Stock: 3}
	// slowRead starts a Load of pet 7 whose fetch waits for release, and returns
	// once that fetch is under way.
	slowRead := func(c *Cache) (release chan<- struct{}, done <-chan struct{}) {
		started, rel, fin := make(chan struct{}), make(chan struct{}), make(chan struct{})
		go func() {
			defer close(fin)
			c.Load(context.Background(), 7, func() (petstore.Pet, error) {
				close(started)
				<-rel
				return rex, nil
			})
		}()
		<-started
		return rel, fin
	}
	noFetch := func() (petstore.Pet, error) {
		t.Error("a miss fetched while the same read was under way")
		return petstore.Pet{}, errors.New("no")
	}

	t.Run("a miss while the pet's read is under way waits for it", func(t *testing.T) {
		c := New(time.Second, 0)
		release, done := slowRead(c)
		defer func() { close(release); <-done }()
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the wait ends at once, proving it waited rather than fetched
		if _, err := c.Load(ctx, 7, noFetch); !errors.Is(err, context.Canceled) {
			t.Fatalf("Load = %v, want it to wait for the read under way", err)
		}
	})
	t.Run("the waiters share the read's pet, which is then cached", func(t *testing.T) {
		c := New(time.Second, 0)
		release, done := slowRead(c)
		got := make(chan petstore.Pet)
		go func() {
			p, _ := c.Load(context.Background(), 7, noFetch)
			got <- p
		}()
		close(release)
		<-done
		if p := <-got; p.ID != 7 {
			t.Fatalf("the waiter got %+v", p)
		}
		if p, _, ok := c.Get(7, time.Now()); !ok || !reflect.DeepEqual(p, rex) {
			t.Fatalf("cached %+v, %v", p, ok)
		}
	})
	t.Run("a miss after a write forgotten reads for itself", func(t *testing.T) {
		c := New(time.Second, 0)
		release, done := slowRead(c)
		defer func() { close(release); <-done }()
		c.Forget(7)
		max := petstore.Pet{ID: 7, Name: "Max"}
		p, err := c.Load(context.Background(), 7, func() (petstore.Pet, error) { return max, nil })
		if err != nil || p.Name != "Max" {
			t.Fatalf("Load = %+v, %v, want its own read", p, err)
		}
	})
	t.Run("a cache that keeps nothing always fetches", func(t *testing.T) {
		c := New(-1, 0)
		n := 0
		for range 3 {
			c.Load(context.Background(), 7, func() (petstore.Pet, error) { n++; return rex, nil })
		}
		if n != 3 {
			t.Fatalf("%d fetches, want 3", n)
		}
	})
}

// BenchmarkFull puts and gets pets spread over ten times more ids than the
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
