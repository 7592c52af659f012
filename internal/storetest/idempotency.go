package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// epoch is an arbitrary fixed time for the tests that set the store's clock.
func epoch() time.Time { return time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC) }

// clock is a settable clock for a store.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// keyed is an order request with an Idempotency-Key; the body's hash stands for the
// quantity and pet, as the HTTP layer's hash would.
func keyed(account, pet int64, quantity int, key string) petstore.NewOrder {
	return petstore.NewOrder{
		AccountID: account, PetID: pet, Quantity: quantity,
		Idempotency: &petstore.IdempotencyKey{AccountID: account, Key: key, RequestHash: []byte{byte(pet), byte(quantity)}},
	}
}

func testIdempotency(t *testing.T, open Opener) {
	t.Run("the same key and body get the first order again and place nothing", func(t *testing.T) { testIdempotentReplay(t, open) })
	t.Run("a replay shows the order as it was placed, after it changed or went", func(t *testing.T) { testIdempotentReplayAsPlaced(t, open) })
	t.Run("a refusal is recorded and replayed, even once the order could be placed", func(t *testing.T) { testIdempotentRefusal(t, open) })
	t.Run("a refusal's message and details are replayed as they were", func(t *testing.T) { testIdempotentRefusalDetails(t, open) })
	t.Run("a key used with another body is idempotency_key_reused and places nothing", func(t *testing.T) { testIdempotencyKeyReused(t, open) })
	t.Run("keys are scoped to the account", func(t *testing.T) { testIdempotencyKeyScope(t, open) })
	t.Run("a key older than a day is used afresh, with any body", func(t *testing.T) { testIdempotencyKeyExpiry(t, open) })
	t.Run("purging deletes the keys first used before the time", func(t *testing.T) { testIdempotencyKeyPurge(t, open) })
	t.Run("concurrent requests with one key place one order and all get it", func(t *testing.T) { testIdempotencyConcurrent(t, open) })
}

func testIdempotentReplay(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(5)
	first, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 2, "k"))
	must(t, err)
	if first.Replayed {
		t.Fatal("the first request was a replay")
	}
	again, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 2, "k"))
	must(t, err)
	if !again.Replayed || !sameOrder(again.Order, first.Order) {
		t.Errorf("retry = %+v, want a replay of %+v", again, first)
	}
	f.wantPet(p.ID, petstore.Available, 3)
}

func testIdempotentReplayAsPlaced(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(5)
	ship := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	req := keyed(a.ID, p.ID, 1, "k")
	req.ShipDate = &ship
	first, err := f.s.PlaceOrder(f.ctx, req)
	must(t, err)
	later := ship.Add(48 * time.Hour)
	_, err = f.s.UpdateOrder(f.ctx, first.Order.ID, petstore.OrderUpdate{ShipDate: &later})
	must(t, err)
	f.complete(first.Order.ID)
	again, err := f.s.PlaceOrder(f.ctx, req)
	must(t, err)
	if !again.Replayed || !sameOrder(again.Order, first.Order) || again.Order.Complete {
		t.Errorf("replay = %+v, want %+v", again.Order, first.Order)
	}

	second, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 1, "k2"))
	must(t, err)
	must(t, f.s.CancelOrder(f.ctx, second.Order.ID, a.ID))
	again, err = f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 1, "k2"))
	must(t, err)
	if !again.Replayed || !sameOrder(again.Order, second.Order) {
		t.Errorf("replay of a cancelled order = %+v, want %+v", again.Order, second.Order)
	}
	f.wantPet(p.ID, petstore.Available, 4)
}

func testIdempotentRefusal(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(1)
	_, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 2, "k"))
	wantCode(t, err, petstore.EInsufficientStock)
	_, err = f.s.SetInventory(f.ctx, p.ID, 100)
	must(t, err)
	again, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 2, "k"))
	wantCode(t, err, petstore.EInsufficientStock)
	if !again.Replayed {
		t.Error("the refusal was not a replay")
	}
	f.wantPet(p.ID, petstore.Available, 100)
}

func testIdempotentRefusalDetails(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(1)
	_, first := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 0, "k"))
	_, again := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 0, "k"))
	wantField(t, first, "quantity")
	wantField(t, again, "quantity")
	if first.Error() != again.Error() {
		t.Errorf("replayed %q, first %q", again, first)
	}
	_, first = f.s.PlaceOrder(f.ctx, keyed(a.ID, 999999, 1, "unknown"))
	_, again = f.s.PlaceOrder(f.ctx, keyed(a.ID, 999999, 1, "unknown"))
	wantCode(t, again, petstore.ENotFound)
	if first.Error() != again.Error() {
		t.Errorf("replayed %q, first %q", again, first)
	}
}

func testIdempotencyKeyReused(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(5)
	_, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 1, "k"))
	must(t, err)
	_, err = f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 2, "k"))
	wantCode(t, err, petstore.EIdempotencyKeyReused)
	f.wantPet(p.ID, petstore.Available, 4)
	// The key still holds the first result.
	again, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 1, "k"))
	must(t, err)
	if !again.Replayed {
		t.Error("the first body is no longer replayed")
	}
}

func testIdempotencyKeyScope(t *testing.T, open Opener) {
	f := setup(t, open)
	a, b := f.account(petstore.Customer), f.account(petstore.Customer)
	p := f.availablePet(5)
	oa, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 1, "k"))
	must(t, err)
	ob, err := f.s.PlaceOrder(f.ctx, keyed(b.ID, p.ID, 1, "k"))
	must(t, err)
	if ob.Replayed || ob.Order.ID == oa.Order.ID || ob.Order.AccountID != b.ID {
		t.Errorf("the other account's order = %+v", ob)
	}
	f.wantPet(p.ID, petstore.Available, 3)
}

func testIdempotencyKeyExpiry(t *testing.T, open Opener) {
	c := &clock{now: epoch()}
	f := setupWith(t, open, Hooks{Now: c.Now})
	a := f.account(petstore.Customer)
	p := f.availablePet(5)
	first, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 1, "k"))
	must(t, err)
	c.Set(epoch().Add(petstore.IdempotencyTTL - time.Second))
	again, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 1, "k"))
	must(t, err)
	if !again.Replayed {
		t.Fatal("a key younger than a day was not replayed")
	}
	c.Set(epoch().Add(petstore.IdempotencyTTL))
	fresh, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 2, "k"))
	must(t, err)
	if fresh.Replayed || fresh.Order.ID == first.Order.ID {
		t.Fatalf("an expired key was replayed: %+v", fresh)
	}
	again, err = f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 2, "k"))
	must(t, err)
	if !again.Replayed || again.Order.ID != fresh.Order.ID {
		t.Errorf("the key's new use is not replayed: %+v", again)
	}
	f.wantPet(p.ID, petstore.Available, 2)
}

func testIdempotencyKeyPurge(t *testing.T, open Opener) {
	c := &clock{now: epoch()}
	f := setupWith(t, open, Hooks{Now: c.Now})
	a := f.account(petstore.Customer)
	p := f.availablePet(10)
	_, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 1, "old-1"))
	must(t, err)
	c.Set(epoch().Add(time.Minute))
	_, err = f.s.PlaceOrder(f.ctx, keyed(a.ID, 999999, 1, "old-2")) // a refusal
	wantCode(t, err, petstore.ENotFound)
	c.Set(epoch().Add(time.Hour))
	_, err = f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 1, "fresh"))
	must(t, err)
	n, err := f.s.PurgeIdempotencyKeys(f.ctx, epoch().Add(time.Hour))
	must(t, err)
	if n != 2 {
		t.Errorf("purged %d keys, want 2", n)
	}
	// A purged key is free; the fresh one is still held.
	o, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 2, "old-1"))
	must(t, err)
	if o.Replayed {
		t.Error("a purged key was replayed")
	}
	_, err = f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 2, "fresh"))
	wantCode(t, err, petstore.EIdempotencyKeyReused)
}

func testIdempotencyConcurrent(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(50)
	wantOneOrderPerKey(t, []petstore.Store{f.s}, a.ID, p.ID, 20, 1)
	f.wantPet(p.ID, petstore.Available, 49)
}
