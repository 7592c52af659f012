package sqlite

import (
	"sync"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// DefaultPetCacheTTL bounds how long a pet read by id may be served from memory. A
// change made through this DB is seen at once (every write forgets the pets it
// touched); a change made by another process sharing the file shows within this time.
const DefaultPetCacheTTL = 100 * time.Millisecond

// petCache keeps pets read by id, the hottest read of the API. The read it saves is
// the better part of such a request's cost on SQLite: a read transaction, whose
// shared-memory locks are system calls.
type petCache struct {
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
	gens [64]uint64
}

type cachedPet struct {
	pet     petstore.Pet
	expires time.Time
}

func newPetCache(ttl time.Duration) *petCache {
	return &petCache{ttl: ttl, max: DefaultPetCacheSize, m: make(map[int64]cachedPet)}
}

// DefaultPetCacheSize is how many pets the cache holds at most.
const DefaultPetCacheSize = 10_000

// get returns the cached pet id, if it is there and fresh, and the generation to give
// put after a miss.
func (c *petCache) get(id int64, now time.Time) (petstore.Pet, uint64, bool) {
	if c.ttl <= 0 {
		return petstore.Pet{}, 0, false
	}
	c.mu.RLock()
	e, ok := c.m[id]
	gen := c.gens[stripe(id)]
	c.mu.RUnlock()
	if ok && now.Before(e.expires) {
		return e.pet, gen, true
	}
	return petstore.Pet{}, gen, false
}

// put caches a pet read at now, unless a write happened since get returned gen.
func (c *petCache) put(p petstore.Pet, gen uint64, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens[stripe(p.ID)] != gen {
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

// forget drops pets that a write changed (or may have: it is called whether or not
// the write committed).
func (c *petCache) forget(ids ...int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		c.gens[stripe(id)]++
		delete(c.m, id)
	}
}

func stripe(id int64) uint64 { return uint64(id) % 64 }
