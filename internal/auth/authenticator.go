package auth

import (
	"context"
	"crypto/sha256"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Authenticator finds the principal behind an API key. Valid keys are cached for a
// short time so that the hot path does not query the database on every request; the
// time is the bound the contract sets on how long a key revoked by another process may
// keep working (one second). Revocations in this process take effect at once (Forget).
type Authenticator struct {
	store petstore.KeyStore
	ttl   time.Duration
	max   int
	now   func() time.Time

	mu    sync.RWMutex
	cache map[[32]byte]cached
	// gen counts revocations, so that a lookup that raced one does not put the
	// revoked key back into the cache.
	gen uint64

	uses uses
}

type cached struct {
	p       petstore.Principal
	expires time.Time
	// noted is the minute this key's use was last noted (see noteUse).
	noted *atomic.Int64
}

// DefaultKeyCacheTTL keeps a revoked key working at most this long on other processes.
const DefaultKeyCacheTTL = 900 * time.Millisecond

// NewAuthenticator returns an Authenticator over store caching keys for ttl (0 turns
// the cache off).
func NewAuthenticator(store petstore.KeyStore, ttl time.Duration) *Authenticator {
	return &Authenticator{store: store, ttl: ttl, max: 10_000, now: time.Now, cache: make(map[[32]byte]cached)}
}

// WithClock makes now the clock that keys' expiry and the cache's lifetime are read
// from (time.Now by default): the service's own clock (httpapi.Config.Now), which tests
// set.
func (a *Authenticator) WithClock(now func() time.Time) *Authenticator {
	a.now = now
	return a
}

// Authenticate returns the principal holding key, or an EUnauthorized error.
func (a *Authenticator) Authenticate(ctx context.Context, key string) (petstore.Principal, error) {
	if !WellFormed(key) {
		return petstore.Principal{}, errUnknownKey
	}
	// The key is copied to a fixed array (WellFormed checked its length) and the hash
	// stays on the stack: []byte(key) and a hash handed to the store would each be an
	// allocation on every request, and nearly every request is a cache hit.
	var raw [keyLength]byte
	copy(raw[:], key)
	h := sha256.Sum256(raw[:])
	now := a.now()
	a.mu.RLock()
	c, ok := a.cache[h]
	gen := a.gen
	a.mu.RUnlock()
	if ok && now.Before(c.expires) {
		if err := checkExpiry(c.p, now); err != nil {
			return petstore.Principal{}, err
		}
		a.noteUse(c.p.KeyID, c.noted, now)
		return c.p, nil
	}
	return a.lookup(ctx, h, gen, now)
}

// lookup reads the principal of the key hashed to h from the store, and caches it
// unless a revocation came after gen.
func (a *Authenticator) lookup(ctx context.Context, h [sha256.Size]byte, gen uint64, now time.Time) (petstore.Principal, error) {
	p, err := a.store.PrincipalByKeyHash(ctx, h[:])
	if err != nil {
		if petstore.ErrorCode(err) == petstore.ENotFound {
			return petstore.Principal{}, errUnknownKey
		}
		return petstore.Principal{}, err
	}
	if p.Disabled {
		// Not cached: the next use reads the account again, which may be enabled by then.
		return petstore.Principal{}, errDisabled
	}
	if err := checkExpiry(p, now); err != nil {
		return petstore.Principal{}, err // and not cached: it will not work again
	}
	a.noteUse(p.KeyID, nil, now)
	if a.ttl > 0 {
		a.mu.Lock()
		if a.gen == gen { // no revocation since the lookup began
			if len(a.cache) >= a.max {
				a.sweep(now)
			}
			noted := new(atomic.Int64)
			noted.Store(minuteOf(now))
			a.cache[h] = cached{p: p, expires: now.Add(a.ttl), noted: noted}
		}
		a.mu.Unlock()
	}
	return p, nil
}

// checkExpiry refuses a key past its expiry, on every request: a cached key expires on
// time too. The caller proved they hold the key, so the answer says it expired.
func checkExpiry(p petstore.Principal, now time.Time) error {
	if p.Expired(now) {
		return petstore.Errorf(petstore.EUnauthorized, "The API key expired at %s; make a new one.", p.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// sweep drops expired entries, and everything if that is not enough, so that memory
// stays bounded however many keys are used. Callers hold a.mu.
func (a *Authenticator) sweep(now time.Time) {
	for h, c := range a.cache {
		if !now.Before(c.expires) {
			delete(a.cache, h)
		}
	}
	if len(a.cache) >= a.max {
		clear(a.cache)
	}
}

// Forget drops a revoked key from the cache so that its next use fails.
func (a *Authenticator) Forget(keyID int64) {
	a.forget(func(p petstore.Principal) bool { return p.KeyID == keyID })
}

// ForgetAccount drops the keys of an account from the cache, so that a change to the
// account (disabled, another role) holds in this process from its next request.
func (a *Authenticator) ForgetAccount(accountID int64) {
	a.forget(func(p petstore.Principal) bool { return p.AccountID == accountID })
}

// forget drops the cached keys whose principal matches, and makes a lookup already
// on its way not cache what it finds (gen).
func (a *Authenticator) forget(match func(petstore.Principal) bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	for h, c := range a.cache {
		if match(c.p) {
			delete(a.cache, h)
		}
	}
}

// errDisabled refuses the key of a disabled account. The caller proved they hold the
// key, so the answer says why, as for an expired one.
var errDisabled = petstore.Errorf(petstore.EUnauthorized, "The API key's account is disabled; an admin may enable it again.")

var errUnknownKey = petstore.Errorf(petstore.EUnauthorized, "The API key is unknown or revoked.")
