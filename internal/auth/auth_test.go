package auth

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

func TestNewKeyIsWellFormedAndHashedStably(t *testing.T) {
	key, prefix, hash := NewKey()
	if !WellFormed(key) || !strings.HasPrefix(key, "psk_") || !strings.HasPrefix(key, prefix) || len(prefix) != 12 {
		t.Fatalf("key %q prefix %q", key, prefix)
	}
	if string(hash) != string(HashKey(key)) {
		t.Fatal("the stored hash is not the hash of the key")
	}
	other, _, _ := NewKey()
	if other == key {
		t.Fatal("two keys are equal")
	}
}

func TestWellFormed(t *testing.T) {
	for _, k := range []string{"", "psk_", "psk_" + strings.Repeat("a", 31), "psk_" + strings.Repeat("a", 33), "PSK_" + strings.Repeat("a", 32), "psk_" + strings.Repeat("A", 32), "psk_" + strings.Repeat("1", 32)} {
		if WellFormed(k) {
			t.Errorf("WellFormed(%q) = true", k)
		}
	}
	if !WellFormed("psk_" + strings.Repeat("z7", 16)) {
		t.Error("a valid key is refused")
	}
}

func TestPasswords(t *testing.T) {
	p := Passwords{Params: PasswordParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}}
	ctx := context.Background()
	h, err := p.Hash(ctx, "correct horse battery")
	if err != nil || !strings.HasPrefix(h, "$argon2id$") {
		t.Fatalf("hash %q, %v", h, err)
	}
	check := func(pw, hash string) bool {
		ok, err := p.Check(ctx, pw, hash)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !check("correct horse battery", h) || check("correct horse batterY", h) || check("x", "") {
		t.Fatal("Check is wrong")
	}
}

func TestPasswordsWaitForAFreeSlot(t *testing.T) {
	p := Passwords{Params: PasswordParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}}.Limit(1)
	p.hashes.slots <- struct{}{} // the only slot is taken
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.Hash(ctx, "correct horse battery"); err == nil {
		t.Fatal("hashed without a free slot")
	}
	<-p.hashes.slots
	if _, err := p.Hash(context.Background(), "correct horse battery"); err != nil {
		t.Fatal(err)
	}
}

func TestAFullPasswordQueueRefusesAtOnce(t *testing.T) {
	p := Passwords{Params: PasswordParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}}.Limit(1)
	p.hashes.slots <- struct{}{} // the only slot is taken
	p.hashes.waiting.Store(p.hashes.queue)
	start := time.Now()
	if _, err := p.Hash(context.Background(), "correct horse battery"); err != ErrBusy {
		t.Fatalf("Hash with a full queue = %v, want ErrBusy", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the refusal took %v", d)
	}
}

func TestSignUpsCannotStarveLogins(t *testing.T) {
	p := Passwords{Params: PasswordParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}}.Limit(1)
	hash, err := p.Hash(context.Background(), "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	p.hashes.slots <- struct{}{} // sign-ups hold every hashing slot
	defer func() { <-p.hashes.slots }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if ok, err := p.Check(ctx, "correct horse battery", hash); !ok || err != nil {
		t.Fatalf("a login while sign-ups are busy: %v, %v", ok, err)
	}
}

// keyStore serves one key, optionally pausing inside the lookup.
type keyStore struct {
	petstore.KeyStore
	mu      sync.Mutex
	revoked bool
	lookups int
	pause   chan struct{} // when set, the lookup waits on it after reading
	inside  chan struct{}
	touches []touch
	failing error // when set, TouchAPIKeys fails with it
}

type touch struct {
	ids []int64
	at  time.Time
}

func (s *keyStore) TouchAPIKeys(ctx context.Context, ids []int64, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing != nil {
		return s.failing
	}
	s.touches = append(s.touches, touch{slices.Sorted(slices.Values(ids)), at})
	return nil
}

func (s *keyStore) PrincipalByKeyHash(ctx context.Context, hash []byte) (petstore.Principal, error) {
	s.mu.Lock()
	s.lookups++
	revoked, pause, inside := s.revoked, s.pause, s.inside
	s.mu.Unlock()
	if pause != nil {
		inside <- struct{}{}
		<-pause
	}
	if revoked {
		return petstore.Principal{}, petstore.Errorf(petstore.ENotFound, "no")
	}
	return petstore.Principal{AccountID: 1, Role: petstore.Customer, KeyID: 9}, nil
}

func TestAuthenticatorCachesValidKeysForItsTTL(t *testing.T) {
	st := &keyStore{}
	a := NewAuthenticator(st, time.Second)
	now := time.Unix(1_800_000_000, 0)
	a.now = func() time.Time { return now }
	key, _, _ := NewKey()
	for range 3 {
		if _, err := a.Authenticate(context.Background(), key); err != nil {
			t.Fatal(err)
		}
	}
	if st.lookups != 1 {
		t.Fatalf("%d lookups, want 1", st.lookups)
	}
	st.revoked = true
	now = now.Add(time.Second)
	if _, err := a.Authenticate(context.Background(), key); petstore.ErrorCode(err) != petstore.EUnauthorized {
		t.Fatalf("after the TTL a revoked key gives %v", err)
	}
}

// Nearly every request is a cache hit, so a hit must not allocate: neither the key's
// bytes nor its hash may reach the heap.
func TestACachedKeyIsCheckedWithoutAllocating(t *testing.T) {
	a := NewAuthenticator(&keyStore{}, time.Minute)
	key, _, _ := NewKey()
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, key); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := a.Authenticate(ctx, key); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a cached key costs %v allocations, want 0", allocs)
	}
}

func TestForgetMakesTheNextUseFail(t *testing.T) {
	st := &keyStore{}
	a := NewAuthenticator(st, time.Minute)
	key, _, _ := NewKey()
	if _, err := a.Authenticate(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	st.revoked = true
	a.Forget(9)
	if _, err := a.Authenticate(context.Background(), key); petstore.ErrorCode(err) != petstore.EUnauthorized {
		t.Fatalf("a forgotten key gives %v", err)
	}
}

// A lookup that began before a revocation must not put the key back in the cache.
func TestALookupRacingARevocationDoesNotCacheTheKey(t *testing.T) {
	st := &keyStore{pause: make(chan struct{}), inside: make(chan struct{})}
	a := NewAuthenticator(st, time.Minute)
	key, _, _ := NewKey()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = a.Authenticate(context.Background(), key) // reads "valid", then pauses
	}()
	<-st.inside
	st.mu.Lock()
	release := st.pause
	st.revoked, st.pause = true, nil
	st.mu.Unlock()
	a.Forget(9) // the revocation completes while the lookup is still in flight
	close(release)
	<-done
	if _, err := a.Authenticate(context.Background(), key); petstore.ErrorCode(err) != petstore.EUnauthorized {
		t.Fatalf("the next use after the revocation gives %v", err)
	}
}

// A check against no hash (no account, or a key-only one) does the work of a real
// check, so that the time of an answer does not tell which emails have accounts. The
// work is argon2id's, which allocates its memory parameter each time: counting the
// bytes allocated shows it ran, where a clock would only be noisy.
func TestACheckWithoutAHashDoesTheWorkOfARealOne(t *testing.T) {
	params := PasswordParams{Memory: 4 * 1024, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}
	p := Passwords{Params: params}
	hash, err := p.Hash(context.Background(), "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	allocated := func(hash string) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if ok, err := p.Check(context.Background(), "a wrong password", hash); ok || err != nil {
			t.Fatalf("Check = %v, %v", ok, err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	allocated("") // the first makes the dummy hash itself
	want := uint64(params.Memory) * 1024
	if real, none := allocated(hash), allocated(""); real < want || none < want {
		t.Errorf("a real check allocated %d bytes and one without a hash %d; argon2id takes %d", real, none, want)
	}
}

// Uses reach the store at the flush, once per key and minute, however many requests
// there were; a failed flush keeps them for the next one.
func TestKeyUsesAreCoalescedToOneWritePerFlush(t *testing.T) {
	for _, ttl := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprintf("cache %v", ttl), func(t *testing.T) {
			st := &keyStore{}
			a := NewAuthenticator(st, ttl)
			now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
			a.now = func() time.Time { return now }
			key, _, _ := NewKey()
			use := func() {
				t.Helper()
				if _, err := a.Authenticate(context.Background(), key); err != nil {
					t.Fatal(err)
				}
			}
			for range 100 {
				use()
			}
			must(t, a.FlushUses(context.Background()))
			must(t, a.FlushUses(context.Background())) // nothing new: no write
			now = now.Add(30 * time.Second)            // the same minute
			use()
			must(t, a.FlushUses(context.Background()))
			now = now.Add(time.Minute)
			use()
			st.failing = errors.New("database down")
			if err := a.FlushUses(context.Background()); err == nil {
				t.Fatal("a failed write was not reported")
			}
			st.failing = nil
			must(t, a.FlushUses(context.Background()))
			first, second := time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC), time.Date(2030, 1, 2, 3, 5, 0, 0, time.UTC)
			want := []touch{{[]int64{9}, first}, {[]int64{9}, second}}
			if ttl == 0 {
				// Without the cache each use is a lookup, and notes itself: the use in
				// the same minute after a flush is written again (to no effect).
				want = []touch{{[]int64{9}, first}, {[]int64{9}, first}, {[]int64{9}, second}}
			}
			if !reflect.DeepEqual(st.touches, want) {
				t.Errorf("writes = %v, want %v", st.touches, want)
			}
		})
	}
}

// An expired key is not a use, nor cached.
func TestAnExpiredKeyIsNotAUse(t *testing.T) {
	st := &expiredStore{keyStore: &keyStore{}}
	a := NewAuthenticator(st, time.Hour)
	key, _, _ := NewKey()
	for range 2 {
		if _, err := a.Authenticate(context.Background(), key); petstore.ErrorCode(err) != petstore.EUnauthorized {
			t.Fatalf("an expired key gives %v", err)
		}
	}
	must(t, a.FlushUses(context.Background()))
	if len(st.touches) != 0 || st.lookups != 2 {
		t.Errorf("writes %v, lookups %d; want none and 2", st.touches, st.lookups)
	}
}

type expiredStore struct{ *keyStore }

func (s expiredStore) PrincipalByKeyHash(ctx context.Context, hash []byte) (petstore.Principal, error) {
	p, err := s.keyStore.PrincipalByKeyHash(ctx, hash)
	p.ExpiresAt = time.Now().Add(-time.Second)
	return p, err
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
