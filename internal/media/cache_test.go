package media

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/acme-pets/petstore/internal/petstore"
)

// countingStore is a real Dir that counts its Gets and may hold them at a gate.
type countingStore struct {
	*Dir
	gets atomic.Int64
	gate chan struct{} // when not nil, a Get waits for it to close
}

func (s *countingStore) Get(ctx context.Context, key string) (Object, error) {
	s.gets.Add(1)
	if s.gate != nil {
		<-s.gate
	}
	return s.Dir.Get(ctx, key)
}

func newCountingStore(t testing.TB) *countingStore {
	t.Helper()
	d, err := NewDir(filepath.Join(t.TempDir(), "media"))
	if err != nil {
		t.Fatal(err)
	}
	return &countingStore{Dir: d}
}

func newCache(t testing.TB, store Store, o CacheOptions) *Cache {
	c := NewCache(store, o)
	t.Cleanup(c.Close)
	return c
}

func TestCacheServesFromMemory(t *testing.T) {
	ctx := context.Background()
	store := newCountingStore(t)
	data := testPNG(t, 1)
	if err := store.Put(ctx, "p1/thumb", "image/png", data); err != nil {
		t.Fatal(err)
	}
	c := newCache(t, store, CacheOptions{})
	first, err := c.Get(ctx, "p1/thumb")
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Get(ctx, "p1/thumb")
	if err != nil {
		t.Fatal(err)
	}
	if got := store.gets.Load(); got != 1 {
		t.Errorf("two Gets read the store %d times, want 1", got)
	}
	if !bytes.Equal(second.Data, data) || second.ContentType != "image/png" || second.ETag != first.ETag {
		t.Errorf("the second Get = %d bytes %s %s, want the first's", len(second.Data), second.ContentType, second.ETag)
	}
}

func TestCacheETags(t *testing.T) {
	ctx := context.Background()
	store := newCountingStore(t)
	id := petstore.NewPhotoID()
	keys := []string{petstore.PhotoKey(id, petstore.PhotoThumb), petstore.PhotoKey(id, petstore.PhotoDisplay)}
	for _, key := range keys {
		if err := store.Put(ctx, key, "image/png", testPNG(t, 1)); err != nil {
			t.Fatal(err)
		}
	}
	c := newCache(t, store, CacheOptions{})
	seen := map[string]bool{}
	for _, key := range keys {
		e, err := c.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		// Strong and quoted, the same in every process (made from the key: an object
		// under a key never changes), and one per key even for equal bytes.
		if e.ETag != ETag(key) || e.ETag[0] != '"' || e.ETag[len(e.ETag)-1] != '"' || strings.ContainsAny(e.ETag[1:len(e.ETag)-1], `" /`) || seen[e.ETag] {
			t.Errorf("%s has the ETag %s", key, e.ETag)
		}
		seen[e.ETag] = true
	}
}

// A load that read an object before its Delete does not put it back in the cache.
func TestCacheForgetsAnObjectDeletedWhileItWasRead(t *testing.T) {
	ctx := context.Background()
	store := newCountingStore(t)
	key := petstore.PhotoKey(petstore.NewPhotoID(), petstore.PhotoThumb)
	if err := store.Put(ctx, key, "image/png", testPNG(t, 1)); err != nil {
		t.Fatal(err)
	}
	c := newCache(t, store, CacheOptions{})
	// The read and the delete interleave as they may between two requests: the
	// read has the bytes when the delete runs, and stores its entry after.
	obj, err := store.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	c.keep(key, Entry{Data: obj.Data, ContentType: obj.ContentType, ETag: ETag(key)})
	if _, ok := c.Cached(key); ok {
		t.Fatal("a deleted object was put back in the cache")
	}
	if _, err := c.Get(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a deleted object = %v, want ErrNotFound", err)
	}
}
func TestCacheDoesNotRememberMissingObjects(t *testing.T) {
	ctx := context.Background()
	store := newCountingStore(t)
	c := newCache(t, store, CacheOptions{})
	if _, err := c.Get(ctx, "p1/thumb"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing key = %v, want ErrNotFound", err)
	}
	if err := store.Put(ctx, "p1/thumb", "image/png", testPNG(t, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "p1/thumb"); err != nil {
		t.Errorf("Get once it is stored = %v", err)
	}
}

func TestCacheDeleteForgets(t *testing.T) {
	ctx := context.Background()
	store := newCountingStore(t)
	if err := store.Put(ctx, "p1/thumb", "image/png", testPNG(t, 1)); err != nil {
		t.Fatal(err)
	}
	c := newCache(t, store, CacheOptions{})
	if _, err := c.Get(ctx, "p1/thumb"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "p1/thumb"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "p1/thumb"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete = %v, want ErrNotFound", err)
	}
	if _, err := store.Dir.Get(ctx, "p1/thumb"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the store still has it: %v", err)
	}
}

func TestCacheStaysWithinItsBytes(t *testing.T) {
	ctx := context.Background()
	store := newCountingStore(t)
	const maxBytes = 1 << 20
	c := newCache(t, store, CacheOptions{MaxBytes: maxBytes})
	blob := bytes.Repeat([]byte{1}, 100<<10)
	for i := range 40 { // 4 MB through a 1 MB cache
		key := petstore.PhotoKey(petstore.NewPhotoID(), petstore.PhotoThumb)
		if err := store.Put(ctx, key, "image/png", blob); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, key); err != nil {
			t.Fatalf("Get %d: %v", i, err)
		}
	}
	c.entries.CleanUp()
	if got := c.entries.WeightedSize(); got > maxBytes || got == 0 {
		t.Errorf("the cache weighs %d bytes, want some and at most %d", got, maxBytes)
	}

	t.Run("an object over a quarter of the budget is served but not kept", func(t *testing.T) {
		big := bytes.Repeat([]byte{2}, maxBytes/4+1)
		if err := store.Put(ctx, "big/original", "image/png", big); err != nil {
			t.Fatal(err)
		}
		before := store.gets.Load()
		for range 2 {
			if e, err := c.Get(ctx, "big/original"); err != nil || len(e.Data) != len(big) {
				t.Fatalf("Get = %d bytes, %v", len(e.Data), err)
			}
		}
		if got := store.gets.Load() - before; got != 2 {
			t.Errorf("two Gets of a big object read the store %d times, want 2", got)
		}
	})
}

func TestCacheCollapsesConcurrentMisses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		store := newCountingStore(t)
		if err := store.Put(ctx, "p1/thumb", "image/png", testPNG(t, 1)); err != nil {
			t.Fatal(err)
		}
		store.gate = make(chan struct{})
		c := NewCache(store, CacheOptions{})
		defer c.Close()
		const callers = 10
		var wg sync.WaitGroup
		errs := make(chan error, callers)
		for range callers {
			wg.Go(func() {
				_, err := c.Get(ctx, "p1/thumb")
				errs <- err
			})
		}
		synctest.Wait() // every caller is waiting, one of them in the store
		close(store.gate)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("Get: %v", err)
			}
		}
		if got := store.gets.Load(); got != 1 {
			t.Errorf("%d concurrent misses read the store %d times, want 1", callers, got)
		}
	})
}

func TestCacheWaiterGivesUpWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newCountingStore(t)
		if err := store.Put(context.Background(), "p1/thumb", "image/png", testPNG(t, 1)); err != nil {
			t.Fatal(err)
		}
		store.gate = make(chan struct{})
		c := NewCache(store, CacheOptions{})
		defer c.Close()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() {
			_, err := c.Get(ctx, "p1/thumb")
			done <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled Get = %v, want context.Canceled", err)
		}
		// The load goes on for whoever asks next, and is kept.
		close(store.gate)
		if _, err := c.Get(context.Background(), "p1/thumb"); err != nil {
			t.Errorf("the next Get = %v", err)
		}
		if got := store.gets.Load(); got != 1 {
			t.Errorf("the store was read %d times, want 1", got)
		}
	})
}

func BenchmarkCacheHit(b *testing.B) {
	ctx := context.Background()
	store := newCountingStore(b)
	if err := store.Put(ctx, "p1/thumb", "image/png", testPNG(b, 1)); err != nil {
		b.Fatal(err)
	}
	c := newCache(b, store, CacheOptions{})
	if _, err := c.Get(ctx, "p1/thumb"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Get(ctx, "p1/thumb"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
