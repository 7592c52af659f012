// Package petcache keeps pets read by id in memory for a short time, for both
// stores: the hottest read of the API, whose database read is the better part of
// such a request's cost. A store forgets the pets each of its writes touched, so
// that its own process sees a change at once; a change made by another process
// shows within the cache's time (TTL), or sooner when the store hears of it
// (PostgreSQL's notifications, see package postgres). No rule reads the cache.
package petcache

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// DefaultTTL bounds how long a pet read by id may be served from memory: how long a
// change made by another process may stay unseen.
const DefaultTTL = 100 * time.Millisecond

// DefaultSize is how many pets a cache holds at most.
const DefaultSize = 10_000

// Cache keeps pets read by id. It is safe for concurrent use.
type Cache struct {
	ttl time.Duration
	max int

	mu sync.RWMutex
	m  map[int64]cachedPet
	// ring holds the ids put, in the order they came (a FIFO of max slots): a put
	// into a full cache evicts the id in the next slot, in O(1). An id forgotten and
	// put again may be in two slots; the older one then evicts it early, which costs
	// a read, never a stale answer.
	ring []int64
	next int
	// gens count the writes to the pets of each stripe (id mod len(gens)), so that a
	// read that raced a write to its pet does not put what it read, which the write
	// may have changed, into the cache; reads of other pets are not held back.
	// ForgetAll, Suspend and Resume advance every stripe.
	gens [64]uint64
	// suspended, while set, makes every get a miss and every put nothing: the store
	// cannot hear of other processes' writes (its listener is down).
	suspended bool
	// reads are the reads of Load under way, by pet id: a miss that finds one of the
	// same generation waits for it rather than reading too.
	reads map[int64]*read
}

// read is one read of Load under way; pet and err are written before done is closed.
type read struct {
	gen  uint64
	done chan struct{}
	pet  petstore.Pet
	err  error
}

type cachedPet struct {
	pet     petstore.Pet
	expires time.Time
}

// New returns a cache whose pets are served for ttl after they were read, at most
// max of them (DefaultSize when 0); a ttl of 0 or less makes a cache that keeps
// nothing.
func New(ttl time.Duration, max int) *Cache {
	if max <= 0 {
		max = DefaultSize
	}
	return &Cache{ttl: ttl, max: max, m: make(map[int64]cachedPet), reads: make(map[int64]*read)}
}

// Get returns the cached pet id, if it is there and fresh, and the generation to give
// Put after a miss.
func (c *Cache) Get(id int64, now time.Time) (petstore.Pet, uint64, bool) {
	if c.ttl <= 0 {
		return petstore.Pet{}, 0, false
	}
	c.mu.RLock()
	e, ok := c.m[id]
	gen := c.gens[stripe(id)]
	suspended := c.suspended
	c.mu.RUnlock()
	if ok && !suspended && now.Before(e.expires) {
		return e.pet, gen, true
	}
	return petstore.Pet{}, gen, false
}

// Load returns the pet id from the cache or, on a miss, from fetch, and caches what
// fetch returns. Misses of one pet that come while its fetch is under way, with no write
// to its stripe forgotten since that fetch began, wait for it and share its answer: when
// an entry of a hot pet expires, one read goes to the database, not one per request
// (they would queue for the pool's connections together). A failed fetch is not
// shared: each waiter then fetches for itself.
func (c *Cache) Load(ctx context.Context, id int64, fetch func() (petstore.Pet, error)) (petstore.Pet, error) {
	now := time.Now()
	p, gen, ok := c.Get(id, now)
	if ok || c.ttl <= 0 {
		if ok {
			return p, nil
		}
		return fetch()
	}
	c.mu.Lock()
	if r := c.reads[id]; r != nil && r.gen == gen {
		c.mu.Unlock()
		select {
		case <-r.done:
		case <-ctx.Done():
			return petstore.Pet{}, ctx.Err()
		}
		if r.err == nil {
			return r.pet, nil
		}
		return fetch()
	}
	r := &read{gen: gen, done: make(chan struct{})}
	c.reads[id] = r
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.reads[id] == r {
			delete(c.reads, id)
		}
		c.mu.Unlock()
		close(r.done)
	}()
	r.err = errAbandoned // until fetch returns: a fetch that panics shares no zero pet
	r.pet, r.err = fetch()
	if r.err == nil {
		c.Put(r.pet, gen, now)
	}
	return r.pet, r.err
}

// errAbandoned is the answer of a read whose fetch never returned; its waiters fetch
// for themselves.
var errAbandoned = errors.New("petcache: the read was abandoned")

// Put caches a pet read at now (a time taken before the read began), unless a write
// to its stripe was forgotten since Get returned gen, or the cache is suspended.
func (c *Cache) Put(p petstore.Pet, gen uint64, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.suspended || c.gens[stripe(p.ID)] != gen {
		return
	}
	if _, ok := c.m[p.ID]; !ok {
		if len(c.ring) < c.max {
			c.ring = append(c.ring, p.ID)
		} else {
			delete(c.m, c.ring[c.next])
			c.ring[c.next] = p.ID
			c.next = (c.next + 1) % c.max
		}
	}
	c.m[p.ID] = cachedPet{pet: p, expires: now.Add(c.ttl)}
}

// Forget drops pets that a write changed (or may have: it is called whether or not
// the write committed).
func (c *Cache) Forget(ids ...int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		c.gens[stripe(id)]++
		delete(c.m, id)
	}
}

// ForgetAll drops every pet, and keeps out what reads begun before it read.
func (c *Cache) ForgetAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetAll()
}

// Suspend drops every pet and keeps the cache empty until Resume: the store may miss
// other processes' writes meanwhile.
func (c *Cache) Suspend() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.suspended = true
	c.forgetAll()
}

// Resume lets the cache keep pets again, once the store hears of other processes'
// writes. A read begun before Resume is not put: it may have read before a write
// that nobody heard of.
func (c *Cache) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.suspended = false
	c.forgetAll()
}

// Suspended reports whether the cache is suspended.
func (c *Cache) Suspended() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.suspended
}

// Len is how many pets the cache holds, fresh or not.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

func (c *Cache) forgetAll() {
	clear(c.m)
	c.ring = c.ring[:0]
	c.next = 0
	for i := range c.gens {
		c.gens[i]++
	}
}

func stripe(id int64) uint64 { return uint64(id) % 64 }
