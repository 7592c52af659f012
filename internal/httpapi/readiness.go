package httpapi

import (
	"sync/atomic"
	"time"
)

// Readiness follows the orders, not only the probe: a database can take /readyz's
// one-row write while every order fails to commit (a nearly full disk took 94,455
// orders answered 503 beside a /readyz of 200). After a run of orders that failed
// because the store was unavailable, with no order placed between them (refusals and
// replays neither count nor break the run: they may be answered from a read), the
// instance says it is not ready; the next order committed says it is again. Orders
// are counted, not commits: a batch that failed (group commit gives its error to each
// of its orders) counts each of them, and under traffic the next batch that commits
// ends the run at once.
//
// An instance that says it is not ready gets no traffic behind a load balancer, and
// so no order that could succeed: once no order has failed for orderQuiet, /readyz
// lets traffic find out again; the run goes on until an order commits, so one more
// failure takes it out again.
const (
	orderFailureRun = 10
	orderQuiet      = 5 * time.Second
)

// orderHealth counts the order commits that failed in a row, and when the last did.
type orderHealth struct {
	failures    atomic.Int64
	lastFailure atomic.Int64 // Unix nanoseconds
}

// committed records an order placed (committed) now.
func (o *orderHealth) committed() {
	// Read first: a shared line written by every order would cost more than the order
	// path's own counters.
	if o.failures.Load() != 0 {
		o.failures.Store(0)
	}
}

// failed records an order the store could not commit, and reports whether it made
// the run long enough to turn the instance unready.
func (o *orderHealth) failed(now time.Time) bool {
	o.lastFailure.Store(now.UnixNano())
	return o.failures.Add(1) == orderFailureRun
}

// failing reports whether the last orderFailureRun orders failed, the last of them
// within orderQuiet.
func (o *orderHealth) failing(now time.Time) bool {
	return o.failures.Load() >= orderFailureRun && now.UnixNano()-o.lastFailure.Load() < int64(orderQuiet)
}
