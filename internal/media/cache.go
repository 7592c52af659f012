package media

import (
	"context"
	"strings"
	"time"

	"github.com/maypok86/otter/v2"
	"golang.org/x/sync/singleflight"
)

// Cache defaults.
const (
	// DefaultCacheBytes holds about 2,000 thumbnails or 300 display sizes.
	DefaultCacheBytes = 64 << 20
	// DefaultCacheTTL bounds how long another process may go on serving a photo this
	// one deleted: a cache hit reads no database, so nothing else tells it.
	DefaultCacheTTL = time.Hour
	// loadTimeout bounds a load from the Store, which runs on for the callers still
	// waiting after the first one gave up.
	loadTimeout = 30 * time.Second
	// entryOverhead is what an entry costs besides its bytes and strings: the
	// cache's node and the Entry's headers, roughly.
	entryOverhead = 128
)

// Entry is a cached object with its ETag.
type Entry struct {
	Data        []byte
	ContentType string
	// ETag is strong and quoted, made from the key: an object under a key never
	// changes (a changed photo is a new photo), so every process gives one tag.
	ETag string
}

// ETag is the entity tag of the object under key (Entry.ETag).
func ETag(key string) string { return `"` + strings.ReplaceAll(key, "/", "-") + `"` }

// CacheOptions shape a Cache; zero values take the defaults.
type CacheOptions struct {
	MaxBytes int64         // what the entries may weigh in all; DefaultCacheBytes
	TTL      time.Duration // how long an entry is served before it is read again; DefaultCacheTTL
}

// Cache serves objects of a Store from memory, within a byte budget. Objects are
// immutable (see the package comment), so an entry is right until its key is
// deleted; Delete drops this process's copies, and TTL bounds the others'.
//
// Eviction is otter's (W-TinyLFU: recency and frequency, so a burst of one-off reads
// does not flush the popular thumbnails), weighed in bytes. An object larger than a
// quarter of the budget is served but not kept, for the same reason.
type Cache struct {
	store   Store
	entries *otter.Cache[string, Entry]
	// loads collapses concurrent misses of one key into one Store read.
	loads    singleflight.Group
	maxEntry int64
	// deleted are the keys Delete removed lately: a load that read one before the
	// Store's delete does not put it back (it would be served until its TTL).
	deleted *otter.Cache[string, struct{}]
}

// NewCache returns a Cache in front of store.
func NewCache(store Store, o CacheOptions) *Cache {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultCacheBytes
	}
	if o.TTL <= 0 {
		o.TTL = DefaultCacheTTL
	}
	entries := otter.Must(&otter.Options[string, Entry]{
		MaximumWeight:    uint64(o.MaxBytes),
		Weigher:          weigh,
		ExpiryCalculator: otter.ExpiryWriting[string, Entry](o.TTL),
	})
	deleted := otter.Must(&otter.Options[string, struct{}]{
		MaximumSize:      100_000,
		ExpiryCalculator: otter.ExpiryWriting[string, struct{}](loadTimeout),
	})
	return &Cache{store: store, entries: entries, maxEntry: o.MaxBytes / 4, deleted: deleted}
}

// keep puts e in the cache, unless it is too large or its key was deleted lately
// (after the read that made e, maybe).
func (c *Cache) keep(key string, e Entry) {
	if _, gone := c.deleted.GetIfPresent(key); !gone && int64(len(e.Data)) <= c.maxEntry {
		c.entries.Set(key, e)
	}
}

// MaxEntry is the size of the largest object the cache keeps; a larger one is read for
// each request (or streamed: see FileOpener).
func (c *Cache) MaxEntry() int64 { return c.maxEntry }

func weigh(key string, e Entry) uint32 {
	return uint32(min(len(key)+len(e.Data)+len(e.ContentType)+len(e.ETag)+entryOverhead, 1<<32-1))
}

// Get returns the object under key from memory, or reads it from the Store (once for
// all who ask meanwhile) and keeps it. A missing object is ErrNotFound, and is not
// remembered: a photo being uploaded may be asked for before its Put ends.
func (c *Cache) Get(ctx context.Context, key string) (Entry, error) {
	if e, ok := c.entries.GetIfPresent(key); ok {
		return e, nil
	}
	return c.load(ctx, key)
}

// Cached returns the object under key if this cache holds it, reading nothing: the
// HTTP layer serves a hit without counting it against the rate limit, and a miss
// (a Store read, which a stranger could make costly) with.
func (c *Cache) Cached(key string) (Entry, bool) { return c.entries.GetIfPresent(key) }

// Store is the Store behind the cache, for writes that need not pass through it.
func (c *Cache) Store() Store { return c.store }

// load reads key from the Store for every caller waiting on it. The read runs without
// the first caller's cancellation (others may still want it), bounded by
// loadTimeout; each caller stops waiting when its own context ends.
func (c *Cache) load(ctx context.Context, key string) (Entry, error) {
	ch := c.loads.DoChan(key, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
		defer cancel()
		obj, err := c.store.Get(ctx, key)
		if err != nil {
			return Entry{}, err
		}
		e := Entry{Data: obj.Data, ContentType: obj.ContentType, ETag: ETag(key)}
		c.keep(key, e)
		return e, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return Entry{}, r.Err
		}
		return r.Val.(Entry), nil
	case <-ctx.Done():
		return Entry{}, ctx.Err()
	}
}

// Delete removes the objects from the Store, then from this cache; a load that read
// one before the Store's delete does not put it back (deleted).
func (c *Cache) Delete(ctx context.Context, keys ...string) error {
	for _, key := range keys {
		c.deleted.Set(key, struct{}{})
	}
	err := c.store.Delete(ctx, keys...)
	for _, key := range keys {
		c.entries.Invalidate(key)
	}
	return err
}

// Close stops the cache's maintenance goroutines.
func (c *Cache) Close() {
	c.entries.StopAllGoroutines()
	c.deleted.StopAllGoroutines()
}
