// Package ratelimit limits requests per caller with a token bucket of N requests per
// second and a burst of N: in process memory (golang.org/x/time/rate) or, when several
// server processes must share the limit, in Redis (GCRA, go-redis/redis_rate).
package ratelimit

import (
	"context"
	"math"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"
)

// Decision is the answer for one request.
type Decision struct {
	Allowed bool
	// Limit is the quota per second (also the burst).
	Limit int
	// Remaining is how many more requests would be allowed right now.
	Remaining int
	// Reset is how long until the bucket is full again.
	Reset time.Duration
	// RetryAfter is how long to wait before the next request is allowed (when refused).
	RetryAfter time.Duration
}

// Limiter decides whether a caller, named by key, may make a request now.
type Limiter interface {
	// Allow takes one request off the caller's allowance if it has one.
	Allow(ctx context.Context, key string) (Decision, error)
	// Reserve is Allow for a request that may turn out not to count: the
	// Reservation gives it back. A limit of outcomes known only after costly work
	// (failed logins) reserves before the work, so that every request in flight
	// holds its share and no number of parallel requests passes the limit; looking
	// first and counting afterwards lets every request that arrives meanwhile through.
	Reserve(ctx context.Context, key string) (Reservation, error)
	// PerSecond is the quota: requests per second, and the burst.
	PerSecond() int
}

// Reservation is a request that Reserve took off a caller's allowance (when
// Allowed), which Cancel can give back.
type Reservation struct {
	Decision
	// cancel gives the request back to the store that took it; nil when nothing
	// was taken.
	cancel func(context.Context) error
}

// Cancel gives the reserved request back, as if it had not been made: the allowance
// grows by one, never past its burst. It goes to the store that took the request,
// also after a Failover changed stores meanwhile (the other one never counted it);
// if that store cannot be reached, the request stays counted. A refused request has
// nothing to give back. Call it at most once.
func (r Reservation) Cancel(ctx context.Context) error {
	if r.cancel == nil {
		return nil
	}
	return r.cancel(ctx)
}

// Factory makes limiters of n requests per window per caller (burst n), all kept in
// one place: process memory, or one Redis shared by every server process.
type Factory func(n int, window time.Duration) Limiter

// InMemory is the Factory of Memory limiters.
func InMemory(n int, window time.Duration) Limiter { return NewMemoryWindow(n, window, 0) }

// DefaultMaxKeys bounds how many callers a Memory limiter remembers.
const DefaultMaxKeys = 65_536

// Memory is a Limiter in process memory. It remembers at most maxKeys callers; the
// least recently seen is forgotten first, which costs nothing of substance: a caller
// idle for a second has a full bucket again anyway, and a forgotten one starts full.
type Memory struct {
	limit   rate.Limit
	burst   int
	buckets *lru.Cache[string, *rate.Limiter]
	now     func() time.Time
}

// NewMemory returns a Memory limiter of perSecond requests per second per caller
// (burst perSecond), remembering at most maxKeys callers.
func NewMemory(perSecond, maxKeys int) *Memory {
	return NewMemoryWindow(perSecond, time.Second, maxKeys)
}

// NewMemoryWindow returns a Memory limiter of n requests per window per caller
// (burst n), remembering at most maxKeys callers.
func NewMemoryWindow(n int, window time.Duration, maxKeys int) *Memory {
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	c, _ := lru.New[string, *rate.Limiter](maxKeys) // only fails for a size <= 0
	return &Memory{limit: rate.Limit(float64(n) / window.Seconds()), burst: n, buckets: c, now: time.Now}
}

// Allow takes one token from the caller's bucket if it has one.
func (m *Memory) Allow(_ context.Context, key string) (Decision, error) {
	d, _ := m.take(key)
	return d, nil
}

// Reserve takes one token from the caller's bucket if it has one; Cancel puts it back.
func (m *Memory) Reserve(_ context.Context, key string) (Reservation, error) {
	d, b := m.take(key)
	r := Reservation{Decision: d}
	if d.Allowed {
		r.cancel = func(context.Context) error {
			// A negative count adds tokens; the bucket caps them at its burst when it
			// next reads them (rate.Limiter's advance). Cancel, rate's own way back,
			// restores nothing once the reservation's time has passed.
			b.AllowN(m.now(), -1)
			return nil
		}
	}
	return r, nil
}

// take takes one token from the caller's bucket if it has one, and returns the
// decision and the bucket.
func (m *Memory) take(key string) (Decision, *rate.Limiter) {
	b, ok := m.buckets.Get(key)
	if !ok {
		b = rate.NewLimiter(m.limit, m.burst)
		// Another request of the same caller may have added one meanwhile; keep that.
		if prev, ok, _ := m.buckets.PeekOrAdd(key, b); ok {
			b = prev
		}
	}
	now := m.now()
	allowed := b.AllowN(now, 1)
	return m.decide(b.TokensAt(now), allowed), b
}

// decide describes a bucket holding tokens, after a request was allowed or not.
func (m *Memory) decide(tokens float64, allowed bool) Decision {
	d := Decision{Limit: m.burst, Allowed: allowed}
	if !allowed {
		d.RetryAfter = seconds((1 - tokens) / float64(m.limit))
	}
	d.Remaining = max(int(math.Floor(tokens)), 0)
	d.Reset = seconds((float64(m.burst) - tokens) / float64(m.limit))
	return d
}

// PerSecond is the quota per caller.
func (m *Memory) PerSecond() int { return m.burst }

// Len reports how many callers are remembered.
func (m *Memory) Len() int { return m.buckets.Len() }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
