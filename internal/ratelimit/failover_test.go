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

func (l *storeLimiter) Peek(ctx context.Context, key string) (Decision, error) {
	if err := l.ask(); err != nil {
		return Decision{}, err
	}
	return l.m.Peek(ctx, key)
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
	if d, _ := l.Peek(ctx, "k"); d.Allowed {
		t.Error("a peek past the limit in memory allows")
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
	if p, _ := l.Peek(ctx, "k"); p.Allowed {
		t.Error("peek after the burst allowed")
	}
	if allowed != 2 || told != 1 {
		t.Fatalf("allowed %d of 5 (want 2), the outage told %d times (want 1)", allowed, told)
	}
}
