package httpapi

import (
	"context"
	"sync"
	"time"
)

// budgetCtx is an API request's context: its parent's values and cancellation, a
// deadline (the request's budget), and the request's info as the value of infoKey.
// It stands for context.WithTimeout and context.WithValue together, and it lives in
// the requestInfo, so that a request allocates neither. Its timer is armed only when
// something waits on Done (a database call, a derived context): a request answered
// from memory, as most GETs of a pet are, never arms one. Err reports the deadline
// from the clock whether or not Done was asked for.
type budgetCtx struct {
	parent   context.Context
	deadline time.Time
	ri       *requestInfo

	mu    sync.Mutex
	done  chan struct{} // made by the first Done
	err   error         // set when done is closed, or by release
	timer *time.Timer
	stop  func() bool // context.AfterFunc's stop on the parent
}

// start makes b the context of a request with ri's info, ending at deadline.
func (b *budgetCtx) start(parent context.Context, deadline time.Time, ri *requestInfo) {
	b.parent, b.deadline, b.ri = parent, deadline, ri
}

func (b *budgetCtx) Deadline() (time.Time, bool) {
	if d, ok := b.parent.Deadline(); ok && d.Before(b.deadline) {
		return d, true
	}
	return b.deadline, true
}

func (b *budgetCtx) Value(key any) any {
	if key == (infoKey{}) {
		return b.ri
	}
	return b.parent.Value(key)
}

func (b *budgetCtx) Done() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done != nil {
		return b.done
	}
	b.done = make(chan struct{})
	if b.err != nil { // over before anyone waited
		close(b.done)
		return b.done
	}
	if err := b.expiredLocked(); err != nil {
		b.finishLocked(err)
		return b.done
	}
	b.timer = time.AfterFunc(time.Until(b.deadline), func() { b.finish(context.DeadlineExceeded) })
	b.stop = context.AfterFunc(b.parent, func() { b.finish(b.parent.Err()) })
	return b.done
}

func (b *budgetCtx) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	if b.done != nil {
		return nil // armed: the timer or the parent will close done
	}
	return b.expiredLocked()
}

// expiredLocked is the error the context has by now without a timer: the parent's,
// or DeadlineExceeded once the deadline has passed.
func (b *budgetCtx) expiredLocked() error {
	if err := b.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(b.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

func (b *budgetCtx) finish(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.finishLocked(err)
}

func (b *budgetCtx) finishLocked(err error) {
	if b.err != nil {
		return
	}
	b.err = err
	if b.done != nil {
		close(b.done)
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	if b.stop != nil {
		b.stop()
	}
}

// release ends the context when the request is over (the cancel of WithTimeout):
// its timer and its hook on the parent go, and whatever still holds it sees it
// canceled.
func (b *budgetCtx) release() { b.finish(context.Canceled) }

// String names the context as the standard library's do, for %v.
func (b *budgetCtx) String() string { return "httpapi.budget" }
