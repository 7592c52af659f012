// Package petcache keeps pets read by id in memory for a short time, for both
// stores: the hottest read of the API, whose database read is the better part of
// such a request's cost. A store forgets the pets each of its writes touched, so
// that its own process sees a change at once; a change made by another process
// shows within the cache's time (TTL), or sooner when the store hears of it
// (PostgreSQL's notifications, see package postgres). No rule reads the cache.
package petcache

import (
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
	return &Cache{ttl: ttl, max: max, m: make(map[int64]cachedPet)}
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
