package httpapi

import (
	"context"
	"errors"
	"testing"
	"time"
)

type otherKey struct{}

// budgetCtx behaves as context.WithTimeout and context.WithValue(infoKey) together,
// whether or not anything waited on Done before the end.
func TestBudgetContext(t *testing.T) {
	newBudget := func(parent context.Context, d time.Duration) (*budgetCtx, *requestInfo) {
		ri := &requestInfo{id: "r1"}
		ri.budget.start(parent, time.Now().Add(d), ri)
		t.Cleanup(ri.budget.release)
		return &ri.budget, ri
	}
	closedWithin := func(c <-chan struct{}, d time.Duration) bool {
		select {
		case <-c:
			return true
		default:
		}
		select {
		case <-c:
			return true
		case <-time.After(d):
			return false
		}
	}
	parent := context.WithValue(context.Background(), otherKey{}, "kept")

	t.Run("values", func(t *testing.T) {
		b, ri := newBudget(parent, time.Minute)
		if info(b) != ri || b.Value(otherKey{}) != "kept" {
			t.Fatalf("info %p (want %p), parent's value %v", info(b), ri, b.Value(otherKey{}))
		}
		if d, ok := b.Deadline(); !ok || time.Until(d) < 50*time.Second {
			t.Fatalf("deadline %v %v", d, ok)
		}
	})
	t.Run("live", func(t *testing.T) {
		b, _ := newBudget(parent, time.Minute)
		if b.Err() != nil || closedWithin(b.Done(), 10*time.Millisecond) || b.Err() != nil {
			t.Fatalf("a live budget: err %v", b.Err())
		}
	})
	t.Run("deadline passed, nobody waited", func(t *testing.T) {
		b, _ := newBudget(parent, time.Millisecond)
		time.Sleep(5 * time.Millisecond) // the clock, not a timer, must tell
		if !errors.Is(b.Err(), context.DeadlineExceeded) {
			t.Fatalf("err %v", b.Err())
		}
		if !closedWithin(b.Done(), 0) || !errors.Is(b.Err(), context.DeadlineExceeded) {
			t.Fatalf("Done after the deadline is not closed; err %v", b.Err())
		}
	})
	t.Run("deadline passes while waiting", func(t *testing.T) {
		b, _ := newBudget(parent, 20*time.Millisecond)
		child, cancel := context.WithCancel(b) // arms it, as a database call would
		defer cancel()
		if !closedWithin(b.Done(), 5*time.Second) || !closedWithin(child.Done(), 5*time.Second) {
			t.Fatal("Done not closed after the deadline")
		}
		if !errors.Is(b.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) {
			t.Fatalf("err %v, child's %v", b.Err(), child.Err())
		}
	})
	t.Run("parent canceled", func(t *testing.T) {
		for _, armed := range []bool{false, true} {
			conn, hangUp := context.WithCancel(parent)
			b, _ := newBudget(conn, time.Minute)
			if armed {
				b.Done()
			}
			hangUp()
			if !closedWithin(b.Done(), 5*time.Second) || !errors.Is(b.Err(), context.Canceled) {
				t.Fatalf("armed %v: the connection's end does not end the request: err %v", armed, b.Err())
			}
		}
	})
	t.Run("released", func(t *testing.T) {
		for _, armed := range []bool{false, true} {
			b, _ := newBudget(parent, time.Minute)
			if armed {
				b.Done()
			}
			b.release()
			if !closedWithin(b.Done(), 0) || !errors.Is(b.Err(), context.Canceled) {
				t.Fatalf("armed %v: released, err %v", armed, b.Err())
			}
			if b.timer != nil && b.timer.Stop() {
				t.Fatal("the timer still runs after release")
			}
		}
	})
}

// A request answered from memory allocates nothing for its budget.
func TestBudgetContextAllocatesNothingUnarmed(t *testing.T) {
	ri := &requestInfo{}
	allocs := testing.AllocsPerRun(100, func() {
		ri.budget = budgetCtx{}
		ri.budget.start(context.Background(), time.Now().Add(time.Minute), ri)
		_ = ri.budget.Err()
		_ = info(&ri.budget)
		ri.budget.release()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations", allocs)
	}
}
