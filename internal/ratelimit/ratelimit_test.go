package ratelimit

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestMemoryAllowsTheBurstThenRefusesUntilRefilled(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	m := NewMemory(5, 0)
	m.now = func() time.Time { return now }
	ctx := context.Background()
	for i := range 5 {
		d, _ := m.Allow(ctx, "k")
		if !d.Allowed || d.Remaining != 4-i || d.Limit != 5 {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	d, _ := m.Allow(ctx, "k")
	if d.Allowed || d.Remaining != 0 || d.RetryAfter <= 0 || d.RetryAfter > 200*time.Millisecond {
		t.Fatalf("past the burst: %+v", d)
	}
	if d, _ := m.Allow(ctx, "other"); !d.Allowed {
		t.Fatal("one caller's limit hit another")
	}
	now = now.Add(200 * time.Millisecond)
	if d, _ := m.Allow(ctx, "k"); !d.Allowed {
		t.Fatalf("not refilled after 1/rate: %+v", d)
	}
	now = now.Add(time.Second)
	if d, _ := m.Allow(ctx, "k"); !d.Allowed || d.Remaining != 4 {
		t.Fatalf("not full after a second: %+v", d)
	}
}

func TestMemoryStaysBoundedWithManyCallers(t *testing.T) {
	const callers = 100_000
	m := NewMemory(10, 10_000)
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range callers {
		if d, _ := m.Allow(ctx, fmt.Sprintf("caller-%d", i)); !d.Allowed {
			t.Fatalf("a new caller was refused")
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if m.Len() != 10_000 {
		t.Fatalf("remembers %d callers, want at most 10000", m.Len())
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 8<<20 {
		t.Fatalf("heap grew by %d bytes for %d callers", grown, callers)
	}
}

func TestRedisSharesTheLimit(t *testing.T) {
	ctx := context.Background()
	// Two limiters on two clients stand for two server processes.
	c1, c2 := testRedis(t), testRedis(t)
	a, b := NewRedis(c1, "petstore-test:", 4), NewRedis(c2, "petstore-test:", 4)
	key := fmt.Sprintf("test-%d", time.Now().UnixNano())
	allowed := 0
	for i := range 8 {
		l := a
		if i%2 == 1 {
			l = b
		}
		d, err := l.Allow(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			allowed++
		} else if d.RetryAfter <= 0 {
			t.Fatalf("refused without RetryAfter: %+v", d)
		}
	}
	if allowed != 4 {
		t.Fatalf("two processes together allowed %d of a burst of 4", allowed)
	}
}

func TestAWindowedLimiterRefillsOverItsWindow(t *testing.T) {
	m := NewMemoryWindow(2, time.Minute, 0)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	m.now = func() time.Time { return now }
	for range 2 {
		if d, _ := m.Allow(context.Background(), "a"); !d.Allowed {
			t.Fatal("the burst was refused")
		}
	}
	d, _ := m.Allow(context.Background(), "a")
	if d.Allowed || d.RetryAfter < 29*time.Second || d.RetryAfter > 31*time.Second {
		t.Fatalf("past the burst: %+v, want a refusal for about 30 s", d)
	}
	if d, _ := m.Allow(context.Background(), "b"); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("another caller: %+v", d)
	}
	now = now.Add(30 * time.Second)
	if d, _ := m.Allow(context.Background(), "a"); !d.Allowed {
		t.Fatal("the request refilled after 30 s was refused")
	}
	if d, _ := m.Allow(context.Background(), "a"); d.Allowed {
		t.Fatal("two requests allowed 30 s after the burst, want one")
	}
}

// Redis keeps windowed limits too, with the same RetryAfter.
func TestRedisWindowRefusesPastTheBurst(t *testing.T) {
	l := NewRedisWindow(testRedis(t), "petstore-test:", 2, time.Minute)
	ctx := context.Background()
	key := fmt.Sprintf("test-window-%d", time.Now().UnixNano())
	for range 2 {
		if d, _ := l.Allow(ctx, key); !d.Allowed {
			t.Fatal("the burst was refused")
		}
	}
	d, err := l.Allow(ctx, key)
	if err != nil || d.Allowed || d.RetryAfter < 28*time.Second || d.RetryAfter > 31*time.Second {
		t.Fatalf("past the burst: %+v, %v; want a refusal for about 30 s", d, err)
	}
}

// A reservation holds its request until given back, in memory and in Redis alike:
// given back, the allowance is as if it had never been made (a lone one leaves the
// bucket full), never more; a refused one has nothing to give back; and parallel
// reservations never pass the burst.
func TestAReservationHoldsUntilGivenBack(t *testing.T) {
	limiters := map[string]func(t *testing.T) Limiter{
		"memory": func(*testing.T) Limiter { return NewMemoryWindow(3, time.Minute, 0) },
		"redis": func(t *testing.T) Limiter {
			return NewRedisWindow(testRedis(t), fmt.Sprintf("petstore-test-%d:", time.Now().UnixNano()), 3, time.Minute)
		},
	}
	for name, open := range limiters {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			l := open(t)
			reserve := func(key string) Reservation {
				t.Helper()
				r, err := l.Reserve(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			allowed := func(key string, n int) (got int) {
				t.Helper()
				for range n {
					d, err := l.Allow(ctx, key)
					if err != nil {
						t.Fatal(err)
					}
					if d.Allowed {
						got++
					}
				}
				return got
			}
			cancel := func(r Reservation) {
				t.Helper()
				if err := r.Cancel(ctx); err != nil {
					t.Fatal(err)
				}
			}

			lone := reserve("lone")
			if !lone.Allowed || lone.Remaining != 2 {
				t.Fatalf("a first reservation: %+v", lone.Decision)
			}
			cancel(lone)
			if got := allowed("lone", 4); got != 3 {
				t.Errorf("after a lone reservation given back, %d of 4 allowed, want the whole burst of 3", got)
			}

			var held []Reservation
			for range 3 {
				held = append(held, reserve("full"))
			}
			refused := reserve("full")
			if refused.Allowed || refused.RetryAfter <= 0 {
				t.Fatalf("a reservation past the burst: %+v", refused.Decision)
			}
			cancel(refused)
			if got := allowed("full", 1); got != 0 {
				t.Error("giving back a refused reservation made room")
			}
			cancel(held[0])
			if got := allowed("full", 2); got != 1 {
				t.Errorf("after one of three given back, %d of 2 allowed, want 1", got)
			}

			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				took int
			)
			for range 40 {
				wg.Go(func() {
					r, err := l.Reserve(ctx, "parallel")
					if err != nil {
						t.Error(err)
					}
					if r.Allowed {
						mu.Lock()
						took++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if took != 3 {
				t.Errorf("40 parallel reservations: %d allowed, want the burst of 3", took)
			}
		})
	}
}

func testRedis(t *testing.T) *redis.Client {
	t.Helper()
	url := os.Getenv("PETSTORE_TEST_REDIS_URL")
	if url == "" {
		t.Skip("PETSTORE_TEST_REDIS_URL is not set")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}
