package ratelimit

import (
	"context"
	"fmt"
	"os"
	"runtime"
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
	if p, _ := m.Peek(context.Background(), "a"); p.Allowed || p.RetryAfter < 29*time.Second {
		t.Fatalf("Peek = %+v, want a refusal for about 30 s", p)
	}
	if p, _ := m.Peek(context.Background(), "b"); !p.Allowed || p.Remaining != 2 {
		t.Fatalf("an unknown caller: %+v", p)
	}
	now = now.Add(30 * time.Second)
	if p, _ := m.Peek(context.Background(), "a"); !p.Allowed {
		t.Fatal("still blocked after 30 s")
	}
	// Peeking took nothing: the one request refilled is still there.
	if d, _ := m.Allow(context.Background(), "a"); !d.Allowed {
		t.Fatal("the refilled request was refused")
	}
}

// Redis shares windowed limits between processes, and peeking takes nothing.
func TestRedisWindowPeeksWithoutTaking(t *testing.T) {
	client := testRedis(t)
	l := NewRedisWindow(client, "petstore-test:", 2, time.Minute)
	ctx := context.Background()
	key := fmt.Sprintf("test-peek-%d", time.Now().UnixNano())
	for i := range 3 {
		if p, err := l.Peek(ctx, key); err != nil || !p.Allowed {
			t.Fatalf("peek %d before any request: %+v, %v", i, p, err)
		}
	}
	for range 2 {
		if d, _ := l.Allow(ctx, key); !d.Allowed {
			t.Fatal("the burst was refused")
		}
	}
	p, err := l.Peek(ctx, key)
	if err != nil || p.Allowed || p.RetryAfter < 28*time.Second || p.RetryAfter > 31*time.Second {
		t.Fatalf("peek past the burst: %+v, %v; want a refusal for about 30 s", p, err)
	}
	d, _ := l.Allow(ctx, key)
	if d.Allowed || d.RetryAfter < 28*time.Second {
		t.Fatalf("allow past the burst: %+v", d)
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
