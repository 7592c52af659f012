package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The events every change writes, in its own transaction, and the feed that lists
// them. Each test has a store of its own, so its feed holds only its own events: the
// tests follow it with a feed, which checks that each step wrote exactly the events
// it should.

func testEvents(t *testing.T, open Opener) {
	t.Run("placing orders writes order.placed with the order and the pet's stock events", func(t *testing.T) { testEventsOfPlacing(t, open) })
	t.Run("a batch of orders writes an order.placed per order and each pet's stock events once", func(t *testing.T) { testEventsOfBatch(t, open) })
	t.Run("refusals, replays and changes to nothing write no event", func(t *testing.T) { testNoEventsOfNoChange(t, open) })
	t.Run("a failed commit writes no event", func(t *testing.T) { testNoEventsOfFailedCommit(t, open) })
	t.Run("cancelling an order writes order.cancelled with the order as it was and the stock events of the units returned", func(t *testing.T) { testEventsOfCancelling(t, open) })
	t.Run("completing an order writes order.completed, and pet.status_changed when the pet's status changes", func(t *testing.T) { testEventsOfCompleting(t, open) })
	t.Run("setting only an order's ship date writes no event (the feed tells of placed, completed and cancelled orders only)", func(t *testing.T) { testNoEventsOfShipDate(t, open) })
	t.Run("setting the stock writes its stock events", func(t *testing.T) { testEventsOfStock(t, open) })
	t.Run("changing a pet's status writes pet.status_changed; other catalogue changes write none", func(t *testing.T) { testEventsOfPetChanges(t, open) })
	t.Run("the feed lists events by Seq, filters by type, pages by Seq and finds one by id", func(t *testing.T) { testFeedListing(t, open) })
	t.Run("an event keeps the traceparent of the span that wrote it; one written without a span has none", func(t *testing.T) { testEventsKeepTheirTrace(t, open) })
}

// testEventsKeepTheirTrace writes stock events without a span, then with one, and
// reads them back from the feed: webhook deliveries go on in the writer's trace
// (petstore.Event.TraceParent).
func testEventsKeepTheirTrace(t *testing.T, open Opener) {
	f := setup(t, open)
	fd := f.feed()
	p := f.availablePet(1)
	for _, e := range fd.next(invUpd, restocked) {
		if e.TraceParent != "" {
			t.Errorf("%s written without a span has traceparent %q", e.Type, e.TraceParent)
		}
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xab, 1}, SpanID: trace.SpanID{0xcd, 2}, TraceFlags: trace.FlagsSampled,
	})
	_, err := f.s.SetInventory(trace.ContextWithSpanContext(f.ctx, sc), p.ID, 5)
	must(t, err)
	want := "00-ab010000000000000000000000000000-cd02000000000000-01"
	for _, e := range fd.next(invUpd) {
		if e.TraceParent != want {
			t.Errorf("%s written in a span has traceparent %q, want %q", e.Type, e.TraceParent, want)
		}
	}
}

func testEventsOfPlacing(t *testing.T, open Opener) {
	f, c := clocked(t, open)
	fd := f.feed()
	a := f.account(petstore.Customer)
	p := f.availablePet(2)
	t0 := epoch()
	wantEvents(t, fd.next(invUpd, restocked),
		stockEvent(invUpd, p.ID, 2, petstore.Available, t0),
		stockEvent(restocked, p.ID, 2, petstore.Available, t0))

	t1 := t0.Add(time.Minute)
	c.Set(t1)
	ship := time.Date(2031, 2, 3, 4, 5, 6, 7000, time.UTC)
	o, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: 1, ShipDate: &ship})
	must(t, err)
	wantEvents(t, fd.next(placed, invUpd),
		orderEvent(placed, o.Order, t1),
		stockEvent(invUpd, p.ID, 1, petstore.Available, t1))

	t2 := t1.Add(time.Minute)
	c.Set(t2)
	last := f.order(a.ID, p.ID, 1)
	wantEvents(t, fd.next(placed, invUpd, soldOut, statusChg),
		orderEvent(placed, last, t2),
		stockEvent(invUpd, p.ID, 0, petstore.Pending, t2),
		stockEvent(soldOut, p.ID, 0, petstore.Pending, t2),
		statusEvent(p, petstore.Pending, 0, t2))
}

func testEventsOfBatch(t *testing.T, open Opener) {
	g := newBatchGate()
	c := &clock{now: epoch()}
	f := setupWith(t, open, Hooks{Now: c.Now, BeforeCommit: g.beforeCommit})
	fd := f.feed()
	a := f.account(petstore.Customer)
	blocker := f.availablePet(5)
	scarce, plenty := f.availablePet(3), f.availablePet(5)
	_, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, plenty.ID, 1, "earlier"))
	must(t, err)
	fd.next(invUpd, restocked, invUpd, restocked, invUpd, restocked, placed, invUpd)

	t1 := epoch().Add(time.Hour)
	c.Set(t1)
	g.arm(nil)
	reqs := []petstore.NewOrder{
		{AccountID: a.ID, PetID: scarce.ID, Quantity: 1},
		{AccountID: a.ID, PetID: plenty.ID, Quantity: 2},
		{AccountID: a.ID, PetID: scarce.ID, Quantity: 1},
		{AccountID: a.ID, PetID: plenty.ID, Quantity: 10},  // refused: 4 left
		keyed(a.ID, plenty.ID, 1, "earlier"),               // replayed
		keyed(a.ID, plenty.ID, 3, "earlier"),               // refused: the key was used for another body
		{AccountID: a.ID, PetID: 999999, Quantity: 1},      // refused: no such pet
		{AccountID: a.ID, PetID: scarce.ID, Quantity: 1},   // takes the last one
		{AccountID: a.ID, PetID: scarce.ID, Quantity: 1},   // refused: sold out
		keyed(a.ID, plenty.ID, 1, "fresh"),                 // placed
		keyed(a.ID, plenty.ID, 1, "fresh"),                 // replayed within the batch
		{AccountID: a.ID, PetID: blocker.ID, Quantity: 50}, // refused
	}
	results, errs := queueBehind(f, g, petstore.NewOrder{AccountID: a.ID, PetID: blocker.ID, Quantity: 1}, reqs)
	if n := g.count(); n != 2 {
		t.Fatalf("the requests took %d batches after the blocker's, want 1", n-1)
	}
	var orders []petstore.Order
	for i := range reqs {
		if errs[i] == nil && !results[i].Replayed {
			orders = append(orders, results[i].Order)
		}
	}
	if len(orders) != 5 {
		t.Fatalf("%d orders were placed, want 5: %v", len(orders), errs)
	}
	got := fd.nextAnyOrder(placed, invUpd, // the blocker's batch
		placed, placed, placed, placed, placed, invUpd, soldOut, statusChg, invUpd)
	// The blocker's batch committed first.
	if o := got[0].Order; got[0].Type != placed || o == nil || o.PetID != blocker.ID || o.Quantity != 1 {
		t.Errorf("the first event is %s, want the blocker's order", describeEvent(got[0]))
	}
	wantEvents(t, got[1:2], stockEvent(invUpd, blocker.ID, 4, petstore.Available, t1))
	var gotOrders []petstore.Order
	petEvents := map[int64][]petstore.Event{}
	for _, e := range got[2:] {
		switch {
		case e.Order != nil:
			gotOrders = append(gotOrders, *e.Order)
		case e.Inventory != nil:
			petEvents[e.Inventory.PetID] = append(petEvents[e.Inventory.PetID], e)
		case e.Pet != nil:
			petEvents[e.Pet.ID] = append(petEvents[e.Pet.ID], e)
		}
	}
	slices.SortFunc(gotOrders, func(a, b petstore.Order) int { return int(a.ID - b.ID) })
	slices.SortFunc(orders, func(a, b petstore.Order) int { return int(a.ID - b.ID) })
	if len(gotOrders) != len(orders) {
		t.Fatalf("the order.placed events hold %+v, want %+v", gotOrders, orders)
	}
	for i := range orders {
		if !sameOrder(gotOrders[i], orders[i]) {
			t.Errorf("an order.placed event holds %+v, want %+v", gotOrders[i], orders[i])
		}
	}
	wantEvents(t, sortedByType(petEvents[scarce.ID]),
		stockEvent(invUpd, scarce.ID, 0, petstore.Pending, t1),
		stockEvent(soldOut, scarce.ID, 0, petstore.Pending, t1),
		statusEvent(scarce, petstore.Pending, 0, t1))
	wantEvents(t, petEvents[plenty.ID], stockEvent(invUpd, plenty.ID, 1, petstore.Available, t1))
}

func testNoEventsOfNoChange(t *testing.T, open Opener) {
	f := setup(t, open)
	fd := f.feed()
	a := f.account(petstore.Customer)
	p, sold := f.availablePet(3), f.petWith(petstore.Sold, 0)
	done := f.order(a.ID, p.ID, 1)
	f.complete(done.ID)
	_, err := f.s.PlaceOrder(f.ctx, keyed(a.ID, p.ID, 1, "k"))
	must(t, err)
	fd.next(invUpd, restocked, placed, invUpd, completed, placed, invUpd)

	steps := append(orderNoChanges(f, a.ID, p.ID, sold.ID, done.ID), catalogueNoChanges(f, p.ID, sold.ID)...)
	for _, s := range steps {
		err := s.do()
		if s.code == "" {
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		} else {
			wantCode(t, err, s.code)
		}
	}
	fd.nothing()
}

// noChange is a step that must write no event: do returns code, or no error when
// code is empty.
type noChange struct {
	name string
	do   func() error
	code string
}

// orderNoChanges are the orders, replays, cancellations and updates of account's
// orders that change nothing: pet has 1 in stock, sold is sold, done is complete, and
// the key "k" placed an order of 1 of pet.
func orderNoChanges(f *fixture, account, pet, sold, done int64) []noChange {
	yes, no := true, false
	return []noChange{
		{"an order of more than the stock", func() error {
			_, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: account, PetID: pet, Quantity: 5})
			return err
		}, petstore.EInsufficientStock},
		{"an order of a sold-out pet", func() error {
			_, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: account, PetID: sold, Quantity: 1})
			return err
		}, petstore.EInsufficientStock},
		{"an order of an unknown pet", func() error {
			_, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: account, PetID: 999999, Quantity: 1})
			return err
		}, petstore.ENotFound},
		{"a refusal recorded on a fresh key", func() error {
			_, err := f.s.PlaceOrder(f.ctx, keyed(account, pet, 50, "refused"))
			return err
		}, petstore.EInsufficientStock},
		{"a replayed order", func() error {
			o, err := f.s.PlaceOrder(f.ctx, keyed(account, pet, 1, "k"))
			if err == nil && !o.Replayed {
				return errors.New("the order was placed again")
			}
			return err
		}, ""},
		{"a key used for another body", func() error {
			_, err := f.s.PlaceOrder(f.ctx, keyed(account, pet, 2, "k"))
			return err
		}, petstore.EIdempotencyKeyReused},
		{"cancelling a complete order", func() error { return f.s.CancelOrder(f.ctx, done, 0) }, petstore.EConflict},
		{"cancelling an unknown order", func() error { return f.s.CancelOrder(f.ctx, 999999, 0) }, petstore.ENotFound},
		{"completing an unknown order", func() error {
			_, err := f.s.UpdateOrder(f.ctx, 999999, petstore.OrderUpdate{Complete: &yes})
			return err
		}, petstore.ENotFound},
		{"completing a complete order again", func() error {
			_, err := f.s.UpdateOrder(f.ctx, done, petstore.OrderUpdate{Complete: &yes})
			return err
		}, ""},
		{"un-completing a complete order", func() error {
			_, err := f.s.UpdateOrder(f.ctx, done, petstore.OrderUpdate{Complete: &no})
			return err
		}, petstore.EInvalidTransition},
	}
}

// catalogueNoChanges are the changes to the stock and the pets that change nothing:
// pet has 1 in stock, sold is sold.
func catalogueNoChanges(f *fixture, pet, sold int64) []noChange {
	return []noChange{
		{"a stock out of bounds", func() error {
			_, err := f.s.SetInventory(f.ctx, pet, -1)
			return err
		}, petstore.EValidationFailed},
		{"the stock of an unknown pet", func() error {
			_, err := f.s.SetInventory(f.ctx, 999999, 3)
			return err
		}, petstore.ENotFound},
		{"the stock a pet already has", func() error {
			_, err := f.s.SetInventory(f.ctx, pet, 1)
			return err
		}, ""},
		{"a pet change that fails", func() error {
			_, err := f.s.UpdatePet(f.ctx, pet, func(pf petstore.PetFields) (petstore.PetFields, error) {
				pf.Status = petstore.Sold
				return pf, petstore.Invalid("name", "no")
			})
			return err
		}, petstore.EValidationFailed},
		{"a status change rule 7 refuses", func() error {
			_, err := f.s.UpdatePet(f.ctx, sold, func(pf petstore.PetFields) (petstore.PetFields, error) {
				pf.Status = petstore.Pending
				return pf, nil
			})
			return err
		}, petstore.EInvalidTransition},
	}
}

func testNoEventsOfFailedCommit(t *testing.T, open Opener) {
	g := newBatchGate()
	f := setupWith(t, open, Hooks{BeforeCommit: g.beforeCommit})
	fd := f.feed()
	a := f.account(petstore.Customer)
	blocker, p := f.availablePet(5), f.availablePet(1)
	fd.next(invUpd, restocked, invUpd, restocked)
	g.arm(errors.New("the disk is on fire"))
	_, errs := queueBehind(f, g, petstore.NewOrder{AccountID: a.ID, PetID: blocker.ID, Quantity: 1},
		[]petstore.NewOrder{{AccountID: a.ID, PetID: p.ID, Quantity: 1}, {AccountID: a.ID, PetID: p.ID, Quantity: 1}})
	for i, err := range errs {
		if err == nil {
			t.Errorf("request %d succeeded", i)
		}
	}
	fd.next(placed, invUpd) // the blocker's
	fd.nothing()
}

func testEventsOfCancelling(t *testing.T, open Opener) {
	f, c := clocked(t, open)
	fd := f.feed()
	a := f.account(petstore.Customer)
	p := f.availablePet(2)
	ship := time.Date(2032, 1, 1, 0, 0, 0, 0, time.UTC)
	o, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: 2, ShipDate: &ship})
	must(t, err)
	fd.next(invUpd, restocked, placed, invUpd, soldOut, statusChg)
	at := epoch().Add(time.Hour)
	c.Set(at)
	must(t, f.s.CancelOrder(f.ctx, o.Order.ID, a.ID))
	wantEvents(t, fd.next(cancelled, invUpd, restocked, statusChg),
		orderEvent(cancelled, o.Order, at),
		stockEvent(invUpd, p.ID, 2, petstore.Available, at),
		stockEvent(restocked, p.ID, 2, petstore.Available, at),
		statusEvent(p, petstore.Available, 2, at))
}

func testEventsOfCompleting(t *testing.T, open Opener) {
	tests := []struct {
		name    string
		stock   int
		restock int // set after the order when not 0
		setup   []petstore.EventType
		want    []petstore.EventType
		status  petstore.PetStatus
	}{
		{"the last unit: the pet is sold", 1, 0,
			[]petstore.EventType{invUpd, restocked, placed, invUpd, soldOut, statusChg},
			[]petstore.EventType{completed, statusChg}, petstore.Sold},
		{"stock left: the pet stays available", 3, 0,
			[]petstore.EventType{invUpd, restocked, placed, invUpd},
			[]petstore.EventType{completed}, petstore.Available},
		// Open orders keep a restocked pet pending (rule 6) until the last completes.
		{"restocked while pending: the pet becomes available", 1, 4,
			[]petstore.EventType{invUpd, restocked, placed, invUpd, soldOut, statusChg, invUpd, restocked},
			[]petstore.EventType{completed, statusChg}, petstore.Available},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := clocked(t, open)
			fd := f.feed()
			a := f.account(petstore.Customer)
			p := f.availablePet(tt.stock)
			o := f.order(a.ID, p.ID, 1)
			if tt.restock != 0 {
				_, err := f.s.SetInventory(f.ctx, p.ID, tt.restock)
				must(t, err)
			}
			fd.next(tt.setup...)
			at := epoch().Add(time.Hour)
			c.Set(at)
			ship := time.Date(2033, 3, 3, 3, 3, 3, 0, time.UTC)
			got, err := f.s.UpdateOrder(f.ctx, o.ID, petstore.OrderUpdate{Complete: ptr(true), ShipDate: &ship})
			must(t, err)
			o.Complete, o.ShipDate, o.Status, o.CompletedAt = true, &ship, petstore.Completed, &at
			if !sameOrder(got, o) {
				t.Errorf("UpdateOrder = %+v, want %+v", got, o)
			}
			want := []petstore.Event{orderEvent(completed, o, at)}
			after := f.pet(p.ID)
			if after.Status != tt.status {
				t.Fatalf("the pet is %s, want %s", after.Status, tt.status)
			}
			if len(tt.want) == 2 {
				want = append(want, statusEvent(p, tt.status, after.Stock, at))
			}
			wantEvents(t, fd.next(tt.want...), want...)
		})
	}
}

func testNoEventsOfShipDate(t *testing.T, open Opener) {
	f := setup(t, open)
	fd := f.feed()
	a := f.account(petstore.Customer)
	p := f.availablePet(3)
	o := f.order(a.ID, p.ID, 1)
	fd.next(invUpd, restocked, placed, invUpd)
	ship := time.Date(2034, 4, 4, 4, 4, 4, 0, time.UTC)
	_, err := f.s.UpdateOrder(f.ctx, o.ID, petstore.OrderUpdate{ShipDate: &ship})
	must(t, err)
	_, err = f.s.UpdateOrder(f.ctx, o.ID, petstore.OrderUpdate{Complete: ptr(false)})
	must(t, err)
	fd.nothing()
}

func testEventsOfStock(t *testing.T, open Opener) {
	tests := []struct {
		name          string
		status        petstore.PetStatus
		from, to      int
		setup         []petstore.EventType
		want          []petstore.EventType
		wantStatus    petstore.PetStatus
		statusChanges bool
	}{
		{"more stock", petstore.Available, 5, 8, []petstore.EventType{invUpd, restocked}, []petstore.EventType{invUpd}, petstore.Available, false},
		{"less stock", petstore.Available, 5, 2, []petstore.EventType{invUpd, restocked}, []petstore.EventType{invUpd}, petstore.Available, false},
		{"none left: sold out and sold", petstore.Available, 5, 0, []petstore.EventType{invUpd, restocked}, []petstore.EventType{invUpd, soldOut, statusChg}, petstore.Sold, true},
		{"a sold pet restocked becomes available", petstore.Sold, 0, 4, nil, []petstore.EventType{invUpd, restocked, statusChg}, petstore.Available, true},
		{"a pending pet restocked becomes available", petstore.Pending, 0, 1, nil, []petstore.EventType{invUpd, restocked, statusChg}, petstore.Available, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := clocked(t, open)
			fd := f.feed()
			p := f.petWith(tt.status, tt.from)
			if p.Status != tt.status || p.Stock != tt.from {
				t.Fatalf("set up %+v", p)
			}
			if len(tt.setup) > 0 {
				fd.next(tt.setup...)
			}
			at := epoch().Add(time.Hour)
			c.Set(at)
			_, err := f.s.SetInventory(f.ctx, p.ID, tt.to)
			must(t, err)
			want := []petstore.Event{stockEvent(invUpd, p.ID, tt.to, tt.wantStatus, at)}
			if len(tt.want) > 1 {
				want = append(want, stockEvent(tt.want[1], p.ID, tt.to, tt.wantStatus, at))
			}
			if tt.statusChanges {
				want = append(want, statusEvent(p, tt.wantStatus, tt.to, at))
			}
			wantEvents(t, fd.next(tt.want...), want...)
		})
	}
}

func testEventsOfPetChanges(t *testing.T, open Opener) {
	f, c := clocked(t, open)
	fd := f.feed()
	p := f.availablePet(2)
	fd.next(invUpd, restocked)
	other := f.category()
	renamed, err := f.s.UpdatePet(f.ctx, p.ID, func(pf petstore.PetFields) (petstore.PetFields, error) {
		pf.Name, pf.CategoryID = name("Renamed"), other.ID
		return pf, nil
	})
	must(t, err)
	fd.nothing()
	at := epoch().Add(time.Hour)
	c.Set(at)
	got, err := f.s.UpdatePet(f.ctx, p.ID, func(pf petstore.PetFields) (petstore.PetFields, error) {
		pf.Name, pf.Status = name("Sold"), petstore.Sold
		return pf, nil
	})
	must(t, err)
	wantEvents(t, fd.next(statusChg), statusEvent(got, petstore.Sold, 2, at))
	if got.Name == renamed.Name {
		t.Fatal("the pet was not renamed")
	}
	// Creating and deleting pets and categories write none.
	cat, err := f.s.CreateCategory(f.ctx, petstore.Category{Name: name("Cat")})
	must(t, err)
	_, err = f.s.ReplaceCategory(f.ctx, petstore.Category{ID: cat.ID, Name: name("Cat")})
	must(t, err)
	np, err := f.s.CreatePet(f.ctx, petstore.PetFields{Name: name("New"), CategoryID: cat.ID, Status: petstore.Available, Price: Price(1)})
	must(t, err)
	must(t, f.s.DeletePet(f.ctx, np.ID))
	must(t, f.s.DeleteCategory(f.ctx, cat.ID))
	fd.nothing()
}

func testFeedListing(t *testing.T, open Opener) {
	f := setup(t, open)
	fd := f.feed()
	a := f.account(petstore.Customer)
	p := f.availablePet(4)
	for range 3 {
		f.order(a.ID, p.ID, 1)
	}
	all := fd.next(invUpd, restocked, placed, invUpd, placed, invUpd, placed, invUpd)
	if again := fd.read(0, petstore.EventFilter{}, petstore.MaxLimit); !sameEvents(again, all) {
		t.Errorf("read again, the feed is %v, want %v", seqs(again), seqs(all))
	}
	for _, limit := range []int{1, 2, 3} {
		if paged := fd.read(0, petstore.EventFilter{}, limit); !sameEvents(paged, all) {
			t.Errorf("by pages of %d, the feed is %v, want %v", limit, seqs(paged), seqs(all))
		}
	}
	if rest := fd.read(all[4].Seq, petstore.EventFilter{}, petstore.MaxLimit); !sameEvents(rest, all[5:]) {
		t.Errorf("after Seq %d the feed is %v, want %v", all[4].Seq, seqs(rest), seqs(all[5:]))
	}
	var orders []petstore.Event
	for _, e := range all {
		if e.Type == placed {
			orders = append(orders, e)
		}
	}
	if got := fd.read(0, petstore.EventFilter{Type: placed}, 2); !sameEvents(got, orders) {
		t.Errorf("the order.placed events are %v, want %v", seqs(got), seqs(orders))
	}
	if got := fd.read(0, petstore.EventFilter{Type: completed}, 2); len(got) != 0 {
		t.Errorf("the order.completed events are %v, want none", seqs(got))
	}
	for _, e := range all {
		got, err := fd.ws.Event(f.ctx, e.ID)
		must(t, err)
		if got.ID != e.ID || got.Seq != e.Seq || describeEvent(got) != describeEvent(e) {
			t.Errorf("Event(%s) = %s (Seq %d), want %s (Seq %d)", e.ID, describeEvent(got), got.Seq, describeEvent(e), e.Seq)
		}
	}
	_, err := fd.ws.Event(f.ctx, petstore.NewEventID())
	wantCode(t, err, petstore.ENotFound)
}
