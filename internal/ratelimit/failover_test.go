package ratelimit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// store is a shared store that a test can take down and bring back: its limiters
// count in memory of their own while it is up, and fail while it is down.
type store struct {
	mu    sync.Mutex
	down  bool
	asked int
}

func (s *store) setDown(down bool) { s.mu.Lock(); s.down = down; s.mu.Unlock() }

func (s *store) factory(n int, window time.Duration) Limiter {
	return &storeLimiter{s: s, m: NewMemoryWindow(n, window, 0)}
}

type storeLimiter struct {
	s *store
	m *Memory
}

var errDown = errors.New("store down")

func (l *storeLimiter) ask() error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.s.asked++
	if l.s.down {
		return errDown
	}
	return nil
}

func (l *storeLimiter) Allow(ctx context.Context, key string) (Decision, error) {
	if err := l.ask(); err != nil {
		return Decision{}, err
	}
	return l.m.Allow(ctx, key)
}

// Reserve reserves in the store's memory; the reservation's Cancel asks the store
// too, and fails while it is down.
func (l *storeLimiter) Reserve(ctx context.Context, key string) (Reservation, error) {
	if err := l.ask(); err != nil {
		return Reservation{}, err
	}
	r, err := l.m.Reserve(ctx, key)
	if give := r.cancel; give != nil {
		r.cancel = func(ctx context.Context) error {
			if err := l.ask(); err != nil {
				return err
			}
			return give(ctx)
		}
	}
	return r, err
}

func (l *storeLimiter) PerSecond() int { return l.m.PerSecond() }

// While the shared store is down every limit is counted in memory (it never lapses),
// the store is asked once per probe interval, not once per request, and each change
// of its state is told once.
func TestFailoverCountsInMemoryWhileTheStoreIsDownAndTellsEachChangeOnce(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var changes []bool
	st := &store{}
	f := NewFailover(st.factory, InMemory, func(up bool, err error) {
		if up != (err == nil) {
			t.Errorf("change to up=%v with err %v", up, err)
		}
		changes = append(changes, up)
	})
	f.now = func() time.Time { return now }
	l := f.Limit(3, time.Minute)
	other := f.Limit(100, time.Minute) // another limit of the same store
	ctx := context.Background()
	allow := func(n int) (allowed int) {
		for range n {
			if d, err := l.Allow(ctx, "k"); err != nil {
				t.Fatal(err)
			} else if d.Allowed {
				allowed++
			}
		}
		return allowed
	}

	if got := allow(2); got != 2 || st.asked != 2 || !f.Up() {
		t.Fatalf("store up: %d allowed, store asked %d times, up %v", got, st.asked, f.Up())
	}
	st.setDown(true)
	if got := allow(10); got != 3 {
		t.Errorf("store down: %d of 10 allowed, want the limit's 3 counted in memory", got)
	}
	if r, _ := l.Reserve(ctx, "k"); r.Allowed {
		t.Error("a reservation past the limit in memory is allowed")
	}
	if d, _ := other.Allow(ctx, "k"); !d.Allowed {
		t.Error("another limit refused its first request")
	}
	if st.asked != 3 || f.Up() || f.LocalDecisions() != 12 {
		t.Errorf("store down: asked %d times (want once more: the rest waits for the probe), up %v, %d decisions in memory (want 12)", st.asked, f.Up(), f.LocalDecisions())
	}

	now = now.Add(DefaultProbeInterval)
	allow(5)
	if st.asked != 4 || f.Up() {
		t.Errorf("a probe interval on, still down: asked %d times in all (want 4: one probe)", st.asked)
	}
	st.setDown(false)
	now = now.Add(DefaultProbeInterval)
	if got := allow(2); got != 1 || st.asked != 6 || !f.Up() {
		// The store's own count holds 2 of 3 from before the outage: one more is allowed.
		t.Errorf("store back: %d of 2 allowed (want 1: the shared count again), asked %d times (want 6), up %v", got, st.asked, f.Up())
	}
	if want := []bool{false, true}; len(changes) != 2 || changes[0] != want[0] || changes[1] != want[1] {
		t.Errorf("changes told: %v, want %v", changes, want)
	}
}

// A request that gave up (its client left) says nothing about the store.
func TestFailoverIgnoresFailuresOfCancelledRequests(t *testing.T) {
	st := &store{}
	f := NewFailover(st.factory, InMemory, nil)
	l := f.Limit(3, time.Minute)
	st.setDown(true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d, err := l.Allow(ctx, "k"); err != nil || !d.Allowed {
		t.Fatalf("cancelled request: %+v, %v", d, err)
	}
	if !f.Up() {
		t.Error("a cancelled request took the store down")
	}
}

// The same with a real client of a Redis that is not there: the limit holds, and the
// client's refusal is told once.
func TestFailoverHoldsWithRedisOutOfReach(t *testing.T) {
	opt, _ := redis.ParseURL("redis://127.0.0.1:1/0") // nothing listens there
	opt.MaxRetries = -1
	down := redis.NewClient(opt)
	defer down.Close()
	var told int
	l := NewFailover(InRedis(down, "petstore-test:"), InMemory, func(bool, error) { told++ }).Limit(2, time.Minute)
	ctx := context.Background()
	allowed := 0
	for range 5 {
		if d, _ := l.Allow(ctx, "k"); d.Allowed {
			allowed++
		}
	}
	if r, _ := l.Reserve(ctx, "k"); r.Allowed {
		t.Error("a reservation after the burst is allowed")
	}
	if allowed != 2 || told != 1 {
		t.Fatalf("allowed %d of 5 (want 2), the outage told %d times (want 1)", allowed, told)
	}
}

// A reservation goes back to the store that took it, whichever store answers when it
// is given back: the other one never counted it, and crediting it there would give a
// caller one request more than the limit.
func TestFailoverGivesAReservationBackToTheStoreThatTookIt(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	st := &store{}
	f := NewFailover(st.factory, InMemory, nil)
	f.now = func() time.Time { return now }
	l := f.Limit(3, time.Minute)
	ctx := context.Background()
	allowed := func(key string, n int) (got int) {
		for range n {
			if d, _ := l.Allow(ctx, key); d.Allowed {
				got++
			}
		}
		return got
	}
	// bringBack brings the store back; the next request probes it.
	bringBack := func() { st.setDown(false); now = now.Add(DefaultProbeInterval) }

	t.Run("taken in the shared store, given back while it is down", func(t *testing.T) {
		r, err := l.Reserve(ctx, "k")
		if err != nil || !r.Allowed {
			t.Fatalf("reservation: %+v, %v", r, err)
		}
		st.setDown(true)
		if got := allowed("k", 2); got != 2 {
			t.Fatalf("store down: %d of 2 allowed in memory", got)
		}
		if err := r.Cancel(ctx); !errors.Is(err, ErrNotGivenBack) {
			t.Errorf("giving back to a store that is down: %v, want ErrNotGivenBack, not a wait for the store (the request stays counted)", err)
		}
		if got := allowed("k", 2); got != 1 {
			t.Errorf("memory allowed %d more of its 3, want 1: the shared store's reservation was given to it", got)
		}
		bringBack()
		if got := allowed("k", 3); got != 2 || !f.Up() {
			t.Errorf("store back: %d allowed, want 2 (the reservation stays counted); up %v", got, f.Up())
		}
	})

	t.Run("taken in memory while the store is down, given back once it answers", func(t *testing.T) {
		if got := allowed("j", 2); got != 2 {
			t.Fatalf("store up: %d of 2 allowed", got)
		}
		st.setDown(true)
		r, _ := l.Reserve(ctx, "j")
		if !r.Allowed || f.Up() {
			t.Fatalf("reservation in memory: %+v, up %v", r, f.Up())
		}
		bringBack()
		if err := r.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
		if got := allowed("j", 3); got != 1 || !f.Up() {
			t.Errorf("store back: %d allowed, want the 1 its own count leaves (the memory's reservation was given to it); up %v", got, f.Up())
		}
		st.setDown(true)
		if got := allowed("j", 4); got != 3 {
			t.Errorf("store down again: memory allowed %d, want its whole 3 (the reservation was given back to it)", got)
		}
	})
}
