package ratelimit

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// DefaultProbeInterval is how often a Failover asks its shared store again while the
// store is down.
const DefaultProbeInterval = time.Second

// ErrNotGivenBack is the answer of Reservation.Cancel for a request taken in a
// shared store that is down by then: it stays counted there, as it would if the
// refund had been tried and had failed, without waiting for the store's time-out.
var ErrNotGivenBack = errors.New("ratelimit: the shared store is down; the request stays counted")

// Failover keeps limits in a shared store (Redis) and, while that store cannot
// answer, in process memory: a limit never lapses, it only stops being shared. Every
// limit made by one Failover shares its view of the store, so an outage is one
// outage, reported once when it begins (onChange(false, err)) and once when it ends
// (onChange(true, nil)).
//
// While the store is down, one request per probe interval asks it again and every
// other request is decided in memory at once: a store that hangs costs one time-out
// a second, not one per request.
type Failover struct {
	shared, local Factory
	onChange      func(up bool, err error)
	probeEvery    time.Duration
	now           func() time.Time

	down      atomic.Bool
	nextProbe atomic.Int64 // Unix nanoseconds; while down, the first request past it probes
	decided   atomic.Uint64
}

// NewFailover returns a Failover of limits kept by shared, and by local while shared
// cannot answer. onChange, which may be nil, hears of every change of the store's state.
func NewFailover(shared, local Factory, onChange func(up bool, err error)) *Failover {
	if onChange == nil {
		onChange = func(bool, error) {}
	}
	return &Failover{shared: shared, local: local, onChange: onChange, probeEvery: DefaultProbeInterval, now: time.Now}
}

// Limit makes a limiter of n requests per window per caller (burst n) that counts in
// the shared store while it answers and in memory while it does not; it is a Factory.
func (f *Failover) Limit(n int, window time.Duration) Limiter {
	return &failoverLimiter{f: f, shared: f.shared(n, window), local: f.local(n, window)}
}

// Up reports whether the shared store answered last time it was asked.
func (f *Failover) Up() bool { return !f.down.Load() }

// LocalDecisions counts the decisions made in memory because the store was down.
func (f *Failover) LocalDecisions() uint64 { return f.decided.Load() }

// useShared reports whether a request should ask the shared store: always while it is
// up, and once per probe interval while it is down.
func (f *Failover) useShared() bool {
	if !f.down.Load() {
		return true
	}
	next := f.nextProbe.Load()
	now := f.now().UnixNano()
	return now >= next && f.nextProbe.CompareAndSwap(next, now+int64(f.probeEvery))
}

// answered records that the store answered.
func (f *Failover) answered() {
	if f.down.Load() && f.down.CompareAndSwap(true, false) {
		f.onChange(true, nil)
	}
}

// failed records that the store could not answer ctx's request. A request whose own
// context ended says nothing about the store.
func (f *Failover) failed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	f.nextProbe.Store(f.now().UnixNano() + int64(f.probeEvery))
	if f.down.CompareAndSwap(false, true) {
		f.onChange(false, err)
	}
}

type failoverLimiter struct {
	f             *Failover
	shared, local Limiter
}

func (l *failoverLimiter) Allow(ctx context.Context, key string) (Decision, error) {
	if l.f.useShared() {
		d, err := l.shared.Allow(ctx, key)
		if err == nil {
			l.f.answered()
			return d, nil
		}
		l.f.failed(ctx, err)
	}
	l.f.decided.Add(1)
	return l.local.Allow(ctx, key)
}

// Reserve reserves in the store that answers; the Reservation gives the request
// back to that store, whichever answers by then.
func (l *failoverLimiter) Reserve(ctx context.Context, key string) (Reservation, error) {
	if l.f.useShared() {
		r, err := l.shared.Reserve(ctx, key)
		if err == nil {
			l.f.answered()
			if give := r.cancel; give != nil {
				// While the store is down a refund would wait for its time-out; the
				// request stays counted instead, as a refund that fails leaves it.
				r.cancel = func(ctx context.Context) error {
					if !l.f.Up() {
						return ErrNotGivenBack
					}
					return give(ctx)
				}
			}
			return r, nil
		}
		l.f.failed(ctx, err)
	}
	l.f.decided.Add(1)
	return l.local.Reserve(ctx, key)
}

func (l *failoverLimiter) PerSecond() int { return l.shared.PerSecond() }
