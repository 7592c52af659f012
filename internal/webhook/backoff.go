package webhook

import (
	"math"
	"math/rand/v2"
	"time"
)

// Backoff spaces the attempts of one delivery: exponential growth with full jitter
// (the wait before retry n is drawn uniformly from [0, min(Max, Base·2ⁿ)]), so that
// receivers coming back from an outage are not hit by every sender at once, until
// Horizon after the first attempt, when the delivery is given up.
type Backoff struct {
	Base    time.Duration
	Max     time.Duration
	Horizon time.Duration
}

// DefaultBackoff retries for 72 hours; late retries come up to six hours apart.
var DefaultBackoff = Backoff{Base: 30 * time.Second, Max: 6 * time.Hour, Horizon: 72 * time.Hour}

// Next returns when to try again after failed attempt number attempt (0 for the
// first) made at now, of a delivery first tried at first; ok is false when the next
// attempt would fall past the horizon. r draws the jitter (nil: math/rand).
func (b Backoff) Next(first, now time.Time, attempt int, r *rand.Rand) (next time.Time, ok bool) {
	// Base·2ⁿ, compared as Base ≤ Max/2ⁿ so that a large n cannot overflow into a
	// small wait. A negative attempt (a shift would panic) counts as the first.
	attempt = max(attempt, 0)
	ceiling := b.Max
	if attempt < 63 && b.Base <= b.Max>>attempt {
		ceiling = b.Base << attempt
	}
	// The draw is from [0, ceiling]: n is ceiling+1 but for a ceiling of the longest
	// Duration (no cap), where +1 would wrap to a negative n, and for a negative Base
	// or Max; Int64N panics on n ≤ 0.
	n := max(int64(ceiling), 0)
	if n < math.MaxInt64 {
		n++
	}
	var wait time.Duration
	if r != nil {
		wait = time.Duration(r.Int64N(n))
	} else {
		wait = time.Duration(rand.Int64N(n))
	}
	// At least a second apart: a receiver that fails fast is not hammered when the
	// draw is near zero.
	next = now.Add(max(wait, time.Second))
	return next, next.Sub(first) <= b.Horizon
}
