package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// batchGate, once armed, holds the next batch of orders before its commit, so that
// the requests sent meanwhile queue up and are placed together in a later batch. It
// counts the batches that reach their commit after it was armed, and fails every one
// but the held one with fail.
type batchGate struct {
	mu      sync.Mutex
	armed   bool
	batches int
	fail    error
	held    chan struct{}
	release chan struct{}
}

func newBatchGate() *batchGate {
	return &batchGate{held: make(chan struct{}), release: make(chan struct{})}
}

func (g *batchGate) arm(fail error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.fail = true, fail
}

func (g *batchGate) beforeCommit() error {
	g.mu.Lock()
	if !g.armed {
		g.mu.Unlock()
		return nil
	}
	g.batches++
	first, fail := g.batches == 1, g.fail
	g.mu.Unlock()
	if first {
		close(g.held)
		<-g.release
		return nil
	}
	return fail
}

func (g *batchGate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.batches
}

// queueBehind, with g armed, places blocker, waits until its batch is held at the commit, sends
// every request of reqs at once, lets them queue behind it, and releases it. It
// returns the answers, in the order of reqs.
func queueBehind(f *fixture, g *batchGate, blocker petstore.NewOrder, reqs []petstore.NewOrder) ([]petstore.PlacedOrder, []error) {
	f.t.Helper()
	blocked := make(chan error, 1)
	go func() {
		_, err := f.s.PlaceOrder(f.ctx, blocker)
		blocked <- err
	}()
	<-g.held
	results := make([]petstore.PlacedOrder, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = f.s.PlaceOrder(f.ctx, r)
		}()
	}
	// The requests cannot be placed while the blocker's batch is held; wait until all
	// of them wait for the next batch. A request counts once it is in the queue the
	// next batch takes from (groupcommit.Batcher.Pending), so the batch takes them all.
	p, ok := f.s.(interface{ PendingOrders() int })
	if !ok {
		f.t.Fatal("the store does not say how many orders wait for a batch (PendingOrders)")
	}
	for deadline := time.Now().Add(10 * time.Second); p.PendingOrders() != len(reqs); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			f.t.Fatalf("%d orders wait for a batch, want %d", p.PendingOrders(), len(reqs))
		}
	}
	close(g.release)
	if err := <-blocked; err != nil {
		f.t.Fatalf("the blocking order: %v", err)
	}
	wg.Wait()
	return results, errs
}

func testBatches(t *testing.T, open Opener) {
	t.Run("a batch mixing placed, refused and replayed orders answers each as if alone", func(t *testing.T) { testBatchMixed(t, open) })
	t.Run("an order that fails the batch's transaction fails only itself", func(t *testing.T) { testBatchFailsOnlyOne(t, open) })
	t.Run("one key twice in a batch places one order and answers both with it", func(t *testing.T) { testBatchKeyTwice(t, open) })
	t.Run("one key in two batches places one order", func(t *testing.T) { testBatchKeyInTwoBatches(t, open) })
	t.Run("a failed commit fails the whole batch, and nothing of it is written", func(t *testing.T) { testBatchFailedCommit(t, open) })
}

func testBatchMixed(t *testing.T, open Opener) {
	g := newBatchGate()
	f := setupWith(t, open, Hooks{BeforeCommit: g.beforeCommit})
	a := f.account(petstore.Customer)
	blocker := f.availablePet(1)
	plenty, scarce, sold := f.availablePet(10), f.availablePet(1), f.petWith(petstore.Sold, 0)
	stored, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, plenty.ID, 1, "stored"))
	must(t, err)
	reqs := []petstore.NewOrder{
		{AccountID: a.ID, PetID: plenty.ID, Quantity: 2},
		{AccountID: a.ID, PetID: scarce.ID, Quantity: 2},
		{AccountID: a.ID, PetID: sold.ID, Quantity: 1},
		{AccountID: a.ID, PetID: 999999, Quantity: 1},
		keyed(a.ID, plenty.ID, 1, "stored"),
		keyed(a.ID, plenty.ID, 3, "stored"),
		keyed(a.ID, plenty.ID, 2, "fresh"),
		keyed(a.ID, scarce.ID, 5, "refused"),
	}
	g.arm(nil)
	results, errs := queueBehind(f, g, petstore.NewOrder{AccountID: a.ID, PetID: blocker.ID, Quantity: 1}, reqs)
	wants := []struct {
		code     string
		replayed bool
	}{
		{"", false},
		{petstore.EInsufficientStock, false},
		{petstore.EInsufficientStock, false}, // sold out: the stock decides, not the status
		{petstore.ENotFound, false},
		{"", true},
		{petstore.EIdempotencyKeyReused, false},
		{"", false},
		{petstore.EInsufficientStock, false},
	}
	for i, w := range wants {
		if got := codeOrEmpty(errs[i]); got != w.code || results[i].Replayed != w.replayed {
			t.Errorf("request %d: %q (replayed %v), want %q (replayed %v)", i, got, results[i].Replayed, w.code, w.replayed)
		}
	}
	if !sameOrder(results[4].Order, stored.Order) {
		t.Errorf("replayed %+v, want %+v", results[4].Order, stored.Order)
	}
	if n := g.count(); n != 2 {
		t.Errorf("the requests took %d batches after the blocker's, want 1", n-1)
	}
	f.wantPet(plenty.ID, petstore.Available, 10-1-2-2)
	f.wantPet(scarce.ID, petstore.Available, 1)
	f.wantPet(sold.ID, petstore.Sold, 0)
	// The refusal and the fresh order were recorded on their keys.
	again, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, scarce.ID, 5, "refused"))
	if !again.Replayed || petstore.ErrorCode(err) != petstore.EInsufficientStock {
		t.Errorf("the refusal's key replays %+v, %v", again, err)
	}
	again, err = f.s.PlaceOrder(f.ctx, keyed(a.ID, plenty.ID, 2, "fresh"))
	if err != nil || !again.Replayed || !sameOrder(again.Order, results[6].Order) {
		t.Errorf("the fresh key replays %+v, %v; want %+v", again, err, results[6].Order)
	}
	wantOrders(f, 1+1+2) // the blocker, "stored" and two placed in the batch
}

func testBatchFailsOnlyOne(t *testing.T, open Opener) {
	g := newBatchGate()
	f := setupWith(t, open, Hooks{BeforeCommit: g.beforeCommit})
	a := f.account(petstore.Customer)
	blocker, p := f.availablePet(1), f.availablePet(10)
	g.arm(nil)
	// An account that does not exist (none is ever deleted, but the store must not
	// let one such order sink the others) breaks the order's foreign key.
	results, errs := queueBehind(f, g, petstore.NewOrder{AccountID: a.ID, PetID: blocker.ID, Quantity: 1}, []petstore.NewOrder{
		{AccountID: a.ID, PetID: p.ID, Quantity: 1},
		{AccountID: 999999, PetID: p.ID, Quantity: 1},
		keyed(a.ID, p.ID, 2, "with-a-key"),
	})
	must(t, errs[0])
	wantCode(t, errs[1], petstore.ENotFound)
	must(t, errs[2])
	if results[2].Replayed {
		t.Error("a fresh key was replayed")
	}
	f.wantPet(p.ID, petstore.Available, 7)
	wantOrders(f, 3)
}

func testBatchKeyTwice(t *testing.T, open Opener) {
	g := newBatchGate()
	f := setupWith(t, open, Hooks{BeforeCommit: g.beforeCommit})
	a := f.account(petstore.Customer)
	blocker, p := f.availablePet(1), f.availablePet(10)
	g.arm(nil)
	results, errs := queueBehind(f, g, petstore.NewOrder{AccountID: a.ID, PetID: blocker.ID, Quantity: 1},
		[]petstore.NewOrder{keyed(a.ID, p.ID, 4, "twice"), keyed(a.ID, p.ID, 4, "twice")})
	must(t, errs[0])
	must(t, errs[1])
	if n := g.count(); n != 2 {
		t.Errorf("the requests took %d batches after the blocker's, want 1", n-1)
	}
	if results[0].Replayed == results[1].Replayed || !sameOrder(results[0].Order, results[1].Order) {
		t.Errorf("answers %+v and %+v, want one order, once placed and once replayed", results[0], results[1])
	}
	f.wantPet(p.ID, petstore.Available, 6)
}

func testBatchKeyInTwoBatches(t *testing.T, open Opener) {
	g := newBatchGate()
	f := setupWith(t, open, Hooks{BeforeCommit: g.beforeCommit})
	a := f.account(petstore.Customer)
	p := f.availablePet(10)
	// The blocker carries the key: the second request waits in the next batch and
	// finds the key committed.
	g.arm(nil)
	results, errs := queueBehind(f, g, keyed(a.ID, p.ID, 4, "two-batches"), []petstore.NewOrder{keyed(a.ID, p.ID, 4, "two-batches")})
	must(t, errs[0])
	if !results[0].Replayed {
		t.Errorf("the second request was not a replay: %+v", results[0])
	}
	f.wantPet(p.ID, petstore.Available, 6)
	wantOrders(f, 1)
}

func testBatchFailedCommit(t *testing.T, open Opener) {
	g := newBatchGate()
	f := setupWith(t, open, Hooks{BeforeCommit: g.beforeCommit})
	a := f.account(petstore.Customer)
	blocker, p := f.availablePet(1), f.availablePet(5)
	failure := errors.New("the disk is on fire")
	g.arm(failure)
	var reqs []petstore.NewOrder
	for range 4 {
		reqs = append(reqs, petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: 1})
	}
	reqs = append(reqs, keyed(a.ID, p.ID, 1, "during-failure"), petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: 3})
	// The blocker's batch commits; every batch behind it fails.
	results, errs := queueBehind(f, g, petstore.NewOrder{AccountID: a.ID, PetID: blocker.ID, Quantity: 1}, reqs)
	for i := range reqs {
		if errs[i] == nil {
			t.Errorf("request %d succeeded: %+v", i, results[i])
		} else if petstore.ErrorCode(errs[i]) != petstore.EInternal || !errors.Is(errs[i], failure) {
			t.Errorf("request %d: %v, want the commit's failure", i, errs[i])
		}
	}
	f.wantPet(p.ID, petstore.Available, 5)
	wantOrders(f, 1)
	// Nothing was recorded on the key: sent again, the order is placed.
	g.arm(nil)
	o, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 1, "during-failure"))
	must(t, err)
	if o.Replayed {
		t.Error("a key of the failed batch was replayed")
	}
	f.wantPet(p.ID, petstore.Available, 4)
}

// wantOrders checks how many orders the store holds.
func wantOrders(f *fixture, n int) {
	f.t.Helper()
	list, err := f.s.Orders(f.ctx, petstore.OrderFilter{}, petstore.Page{Limit: 100})
	must(f.t, err)
	if len(list) != n {
		f.t.Errorf("%d orders are stored, want %d: %+v", len(list), n, list)
	}
}

func codeOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return petstore.ErrorCode(err)
}
