package storetest

import (
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// sameOrder compares orders, times by instant.
func sameOrder(a, b petstore.Order) bool {
	sameTime := func(x, y *time.Time) bool { return (x == nil) == (y == nil) && (x == nil || x.Equal(*y)) }
	samePrice := (a.UnitPrice == nil) == (b.UnitPrice == nil) && (a.UnitPrice == nil || *a.UnitPrice == *b.UnitPrice)
	return a.ID == b.ID && a.PetID == b.PetID && a.AccountID == b.AccountID && a.Quantity == b.Quantity &&
		a.Complete == b.Complete && sameTime(a.ShipDate, b.ShipDate) && a.CreatedAt.Equal(b.CreatedAt) &&
		a.Status == b.Status && sameTime(a.CompletedAt, b.CompletedAt) && sameTime(a.CancelledAt, b.CancelledAt) &&
		samePrice && a.PetName == b.PetName && a.CategoryID == b.CategoryID && a.Currency == b.Currency
}

func testOrders(t *testing.T, open Opener) {
	t.Run("placing an order takes the quantity off the stock", func(t *testing.T) { testOrderPlaced(t, open) })
	t.Run("an order keeps its ship date, read back in UTC", func(t *testing.T) { testOrderShipDate(t, open) })
	t.Run("an order that takes the last of the stock makes the pet pending", func(t *testing.T) { testOrderTakesLast(t, open) })
	t.Run("an order for more than the stock is insufficient_stock and changes nothing", func(t *testing.T) { testOrderInsufficientStock(t, open) })

	for _, status := range []petstore.PetStatus{petstore.Pending, petstore.Sold} {
		t.Run("an order for a pet staff made "+string(status)+" is invalid_transition", func(t *testing.T) {
			f := setup(t, open)
			p := f.availablePet(3)
			_, err := f.s.UpdatePet(f.ctx, p.ID, func(pf petstore.PetFields) (petstore.PetFields, error) {
				pf.Status = status
				return pf, nil
			})
			must(t, err)
			_, err = f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: f.account(petstore.Customer).ID, PetID: p.ID, Quantity: 1})
			wantCode(t, err, petstore.EInvalidTransition)
			f.wantPet(p.ID, status, 3)
		})
		t.Run("an order for a "+string(status)+" pet at stock 0 is insufficient_stock", func(t *testing.T) {
			f := setup(t, open)
			p := f.petWith(status, 0)
			_, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: f.account(petstore.Customer).ID, PetID: p.ID, Quantity: 1})
			wantCode(t, err, petstore.EInsufficientStock)
			f.wantPet(p.ID, status, 0)
		})
	}

	t.Run("the order after the one that sold a pet out is insufficient_stock", func(t *testing.T) { testOrderAfterSoldOut(t, open) })
	t.Run("a pet without a price is not for sale and nothing changes", func(t *testing.T) { testOrderUnpriced(t, open) })

	for _, q := range []int{0, -1, petstore.MaxOrderQuantity + 1} {
		t.Run("an order of a quantity out of range is refused", func(t *testing.T) {
			f := setup(t, open)
			p := f.availablePet(200)
			_, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: f.account(petstore.Customer).ID, PetID: p.ID, Quantity: q})
			wantField(t, err, "quantity")
			f.wantPet(p.ID, petstore.Available, 200)
		})
	}

	t.Run("an order for an unknown pet is not found", func(t *testing.T) { testOrderUnknownPet(t, open) })
	t.Run("an unknown order is not found", func(t *testing.T) { testOrderUnknown(t, open) })
	t.Run("another account's order is not found, and an admin's lookup finds it", func(t *testing.T) { testOrderOfOthers(t, open) })
	t.Run("cancelling an order puts the quantity back and keeps the order, cancelled; again changes nothing", func(t *testing.T) { testOrderCancelled(t, open) })
	t.Run("cancelling the order that emptied the stock makes the pet available again", func(t *testing.T) { testOrderCancelRestocks(t, open) })
	t.Run("another account's order cannot be cancelled", func(t *testing.T) { testOrderCancelOthers(t, open) })
	t.Run("a complete order cannot be cancelled", func(t *testing.T) { testOrderCancelComplete(t, open) })
	t.Run("a complete order whose pet was deleted still cannot be cancelled", func(t *testing.T) { testOrderCancelCompleteDeletedPet(t, open) })
	t.Run("cancelling an unknown order is not found", func(t *testing.T) { testOrderCancelUnknown(t, open) })
	t.Run("orders are listed newest first, a page at a time, by account, status and date", func(t *testing.T) { testOrdersListed(t, open) })
}

func testOrderPlaced(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(10)
	o := f.order(a.ID, p.ID, 3)
	if o.ID < 1 || o.PetID != p.ID || o.AccountID != a.ID || o.Quantity != 3 || o.Complete || o.ShipDate != nil ||
		o.Status != petstore.Placed || o.UnitPrice == nil || *o.UnitPrice != *p.Price || *o.Total() != 3**p.Price ||
		o.PetName != p.Name || o.CategoryID != p.CategoryID || o.Currency != petstore.DefaultCurrency || o.CompletedAt != nil || o.CancelledAt != nil {
		t.Errorf("order = %+v", o)
	}
	wantRecent(t, "createdAt", o.CreatedAt)
	f.wantPet(p.ID, petstore.Available, 7)
	got, err := f.s.Order(f.ctx, o.ID, a.ID)
	must(t, err)
	if !sameOrder(got, o) {
		t.Errorf("read %+v, want %+v", got, o)
	}
}

func testOrderShipDate(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(10)
	ship := inZone(time.Date(2031, 5, 6, 7, 8, 9, 123456000, time.UTC), -5)
	placed, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: 1, ShipDate: &ship})
	must(t, err)
	o := placed.Order
	if o.ShipDate == nil || !o.ShipDate.Equal(ship) {
		t.Fatalf("ship date = %v, want %v", o.ShipDate, ship)
	}
	got, err := f.s.Order(f.ctx, o.ID, 0)
	must(t, err)
	if got.ShipDate == nil || !got.ShipDate.Equal(ship) || got.ShipDate.Location() != time.UTC {
		t.Errorf("read ship date %v, want %v in UTC", got.ShipDate, ship)
	}
	if !sameOrder(got, o) {
		t.Errorf("read %+v, want %+v", got, o)
	}
}

func testOrderTakesLast(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(4)
	f.order(f.account(petstore.Customer).ID, p.ID, 4)
	f.wantPet(p.ID, petstore.Pending, 0)
}

func testOrderInsufficientStock(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(2)
	_, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: 3})
	wantCode(t, err, petstore.EInsufficientStock)
	f.wantPet(p.ID, petstore.Available, 2)
	list, err := f.s.Orders(f.ctx, petstore.OrderFilter{}, petstore.Page{Limit: 100})
	must(t, err)
	if len(list) != 0 {
		t.Errorf("orders = %+v, want none", list)
	}
}

func testOrderAfterSoldOut(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(2)
	f.order(a.ID, p.ID, 2)
	f.wantPet(p.ID, petstore.Pending, 0)
	_, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: 1})
	wantCode(t, err, petstore.EInsufficientStock)
}

func testOrderUnpriced(t *testing.T, open Opener) {
	f := setup(t, open)
	c := f.category()
	p, err := f.s.CreatePet(f.ctx, petstore.PetFields{Name: name("Free"), CategoryID: c.ID, Status: petstore.Available})
	must(t, err)
	_, err = f.s.SetInventory(f.ctx, p.ID, 4)
	must(t, err)
	_, err = f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: f.account(petstore.Customer).ID, PetID: p.ID, Quantity: 1})
	wantCode(t, err, petstore.ENotForSale)
	f.wantPet(p.ID, petstore.Available, 4)
}

func testOrderUnknownPet(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: f.account(petstore.Customer).ID, PetID: 999, Quantity: 1})
	wantCode(t, err, petstore.ENotFound)
}

func testOrderUnknown(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.Order(f.ctx, 999, 0)
	wantCode(t, err, petstore.ENotFound)
}

func testOrderOfOthers(t *testing.T, open Opener) {
	f := setup(t, open)
	owner, other := f.account(petstore.Customer), f.account(petstore.Customer)
	o := f.order(owner.ID, f.availablePet(5).ID, 1)
	_, err := f.s.Order(f.ctx, o.ID, other.ID)
	wantCode(t, err, petstore.ENotFound)
	if _, err := f.s.Order(f.ctx, o.ID, owner.ID); err != nil {
		t.Errorf("the owner cannot read the order: %v", err)
	}
	if _, err := f.s.Order(f.ctx, o.ID, 0); err != nil {
		t.Errorf("an unscoped lookup cannot read the order: %v", err)
	}
}

func testOrderCancelled(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(5)
	o := f.order(a.ID, p.ID, 2)
	must(t, f.s.CancelOrder(f.ctx, o.ID, a.ID))
	f.wantPet(p.ID, petstore.Available, 5)
	got, err := f.s.Order(f.ctx, o.ID, a.ID)
	must(t, err)
	if got.Status != petstore.Cancelled || got.CancelledAt == nil || got.Complete || got.CompletedAt != nil || *got.UnitPrice != *o.UnitPrice {
		t.Fatalf("cancelled order = %+v", got)
	}
	wantRecent(t, "cancelledAt", *got.CancelledAt)
	must(t, f.s.CancelOrder(f.ctx, o.ID, a.ID))
	f.wantPet(p.ID, petstore.Available, 5)
	again, err := f.s.Order(f.ctx, o.ID, a.ID)
	must(t, err)
	if !sameOrder(again, got) {
		t.Errorf("a second cancel changed the order: %+v, was %+v", again, got)
	}
	_, err = f.s.UpdateOrder(f.ctx, o.ID, petstore.OrderUpdate{Complete: ptr(true)})
	wantCode(t, err, petstore.EInvalidTransition)
	f.wantPet(p.ID, petstore.Available, 5)
}

func testOrderCancelRestocks(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(3)
	o := f.order(a.ID, p.ID, 3)
	f.wantPet(p.ID, petstore.Pending, 0)
	must(t, f.s.CancelOrder(f.ctx, o.ID, 0))
	f.wantPet(p.ID, petstore.Available, 3)
}

func testOrderCancelOthers(t *testing.T, open Opener) {
	f := setup(t, open)
	owner, other := f.account(petstore.Customer), f.account(petstore.Customer)
	p := f.availablePet(5)
	o := f.order(owner.ID, p.ID, 2)
	wantCode(t, f.s.CancelOrder(f.ctx, o.ID, other.ID), petstore.ENotFound)
	f.wantPet(p.ID, petstore.Available, 3)
	if _, err := f.s.Order(f.ctx, o.ID, owner.ID); err != nil {
		t.Errorf("the order is gone: %v", err)
	}
}

func testOrderCancelComplete(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(5)
	o := f.order(a.ID, p.ID, 2)
	f.complete(o.ID)
	wantCode(t, f.s.CancelOrder(f.ctx, o.ID, a.ID), petstore.EConflict)
	f.wantPet(p.ID, petstore.Available, 3)
	if got, err := f.s.Order(f.ctx, o.ID, a.ID); err != nil || !got.Complete {
		t.Errorf("order = %+v, %v; want it complete", got, err)
	}
}

func testOrderCancelCompleteDeletedPet(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(5)
	o := f.order(a.ID, p.ID, 2)
	f.complete(o.ID)
	must(t, f.s.DeletePet(f.ctx, p.ID))
	wantCode(t, f.s.CancelOrder(f.ctx, o.ID, a.ID), petstore.EConflict)
}

func testOrderCancelUnknown(t *testing.T, open Opener) {
	f := setup(t, open)
	wantCode(t, f.s.CancelOrder(f.ctx, 999, 0), petstore.ENotFound)
}

func testOrdersListed(t *testing.T, open Opener) {
	f := setup(t, open)
	a, b := f.account(petstore.Customer), f.account(petstore.Customer)
	p := f.availablePet(100)
	a1 := f.order(a.ID, p.ID, 1).ID
	b1 := f.order(b.ID, p.ID, 1).ID
	a2 := f.order(a.ID, p.ID, 1).ID
	a3 := f.order(a.ID, p.ID, 1).ID
	b2 := f.order(b.ID, p.ID, 1).ID
	f.complete(a2)
	f.complete(b1)
	must(t, f.s.CancelOrder(f.ctx, a3, 0))
	at := func(id int64) *time.Time {
		o, err := f.s.Order(f.ctx, id, 0)
		must(t, err)
		return &o.CreatedAt
	}
	cases := []struct {
		test   string
		filter petstore.OrderFilter
		page   petstore.Page
		want   []int64
	}{
		{"all", petstore.OrderFilter{}, petstore.Page{Limit: 100}, []int64{b2, a3, a2, b1, a1}},
		{"the first page", petstore.OrderFilter{}, petstore.Page{Limit: 2}, []int64{b2, a3}},
		{"the next page", petstore.OrderFilter{}, petstore.Page{Limit: 2, After: a3}, []int64{a2, b1}},
		{"oldest first", petstore.OrderFilter{Oldest: true}, petstore.Page{Limit: 100}, []int64{a1, b1, a2, a3, b2}},
		{"oldest first, the next page", petstore.OrderFilter{Oldest: true}, petstore.Page{Limit: 2, After: b1}, []int64{a2, a3}},
		{"one account's", petstore.OrderFilter{AccountID: a.ID}, petstore.Page{Limit: 100}, []int64{a3, a2, a1}},
		{"one account's, paged", petstore.OrderFilter{AccountID: a.ID}, petstore.Page{Limit: 1, After: a3}, []int64{a2}},
		{"completed", petstore.OrderFilter{Status: petstore.Completed}, petstore.Page{Limit: 100}, []int64{a2, b1}},
		{"placed", petstore.OrderFilter{Status: petstore.Placed}, petstore.Page{Limit: 100}, []int64{b2, a1}},
		{"cancelled", petstore.OrderFilter{Status: petstore.Cancelled}, petstore.Page{Limit: 100}, []int64{a3}},
		{"one account's placed", petstore.OrderFilter{AccountID: b.ID, Status: petstore.Placed}, petstore.Page{Limit: 100}, []int64{b2}},
		{"placed from a2 (included) to b2 (excluded)", petstore.OrderFilter{CreatedAfter: at(a2), CreatedBefore: at(b2)}, petstore.Page{Limit: 100}, []int64{a3, a2}},
		{"one account's, from a3", petstore.OrderFilter{AccountID: a.ID, CreatedAfter: at(a3)}, petstore.Page{Limit: 100}, []int64{a3}},
		{"before a1: none", petstore.OrderFilter{CreatedBefore: at(a1)}, petstore.Page{Limit: 100}, nil},
		{"an account without orders", petstore.OrderFilter{AccountID: f.account(petstore.Customer).ID}, petstore.Page{Limit: 100}, nil},
	}
	for _, c := range cases {
		got, err := f.s.Orders(f.ctx, c.filter, c.page)
		must(t, err)
		if !sameIDs(ids(got, orderID), c.want) {
			t.Errorf("%s: got %v, want %v", c.test, ids(got, orderID), c.want)
		}
	}
	got, err := f.s.Orders(f.ctx, petstore.OrderFilter{AccountID: b.ID}, petstore.Page{Limit: 1})
	must(t, err)
	want, err := f.s.Order(f.ctx, b2, 0)
	must(t, err)
	if len(got) != 1 || !sameOrder(got[0], want) {
		t.Errorf("listed %+v, want %+v", got, want)
	}
}

func testOrderUpdates(t *testing.T, open Opener) {
	t.Run("completing the only order of a pet with no stock left makes it sold", func(t *testing.T) { testCompleteSellsOut(t, open) })
	t.Run("completing one of two open orders keeps the pet pending until the other completes", func(t *testing.T) { testCompleteOneOfTwo(t, open) })
	t.Run("completing an order of a pet with stock left keeps it available", func(t *testing.T) { testCompleteWithStockLeft(t, open) })
	t.Run("completing the last open order of a restocked pending pet makes it available", func(t *testing.T) { testCompleteRestockedPending(t, open) })
	t.Run("a ship date is set on an incomplete order", func(t *testing.T) { testUpdateShipDate(t, open) })
	t.Run("a ship date and completion are set together", func(t *testing.T) { testUpdateShipDateAndComplete(t, open) })
	t.Run("complete false on an incomplete order changes nothing", func(t *testing.T) { testUpdateCompleteFalse(t, open) })

	shipped := time.Date(2031, 1, 2, 3, 4, 5, 6000, time.UTC)
	cases := []struct {
		test   string
		update petstore.OrderUpdate
		code   string // empty: the order comes back unchanged
	}{
		{"an empty update of a complete order returns it unchanged", petstore.OrderUpdate{}, ""},
		{"completing a complete order again returns it unchanged", petstore.OrderUpdate{Complete: ptr(true)}, ""},
		{"the same ship date on a complete order returns it unchanged", petstore.OrderUpdate{ShipDate: ptr(inZone(shipped, 3))}, ""},
		{"the same ship date with completion on a complete order returns it unchanged", petstore.OrderUpdate{ShipDate: ptr(shipped), Complete: ptr(true)}, ""},
		{"another ship date on a complete order is invalid_transition", petstore.OrderUpdate{ShipDate: ptr(shipped.Add(time.Hour))}, petstore.EInvalidTransition},
		{"undoing the completion of an order is invalid_transition", petstore.OrderUpdate{Complete: ptr(false)}, petstore.EInvalidTransition},
	}
	for _, c := range cases {
		t.Run(c.test, func(t *testing.T) {
			f := setup(t, open)
			p := f.availablePet(2)
			placed, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: f.account(petstore.Customer).ID, PetID: p.ID, Quantity: 2, ShipDate: &shipped})
			must(t, err)
			o := placed.Order
			done := f.complete(o.ID)
			got, err := f.s.UpdateOrder(f.ctx, o.ID, c.update)
			if c.code != "" {
				wantCode(t, err, c.code)
			} else {
				must(t, err)
				if !sameOrder(got, done) {
					t.Errorf("order = %+v, want %+v", got, done)
				}
			}
			read, err := f.s.Order(f.ctx, o.ID, 0)
			must(t, err)
			if !sameOrder(read, done) {
				t.Errorf("the order changed to %+v", read)
			}
			f.wantPet(p.ID, petstore.Sold, 0)
		})
	}

	t.Run("a ship date on a complete order that had none is invalid_transition", func(t *testing.T) { testUpdateShipDateOfComplete(t, open, shipped) })
	t.Run("updating an unknown order is not found", func(t *testing.T) { testUpdateUnknownOrder(t, open) })
}

func testCompleteSellsOut(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(2)
	o := f.order(f.account(petstore.Customer).ID, p.ID, 2)
	got := f.complete(o.ID)
	if !got.Complete || got.ID != o.ID || got.Quantity != 2 {
		t.Errorf("order = %+v", got)
	}
	f.wantPet(p.ID, petstore.Sold, 0)
}

func testCompleteOneOfTwo(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(2)
	o1 := f.order(a.ID, p.ID, 1)
	o2 := f.order(a.ID, p.ID, 1)
	f.complete(o1.ID)
	f.wantPet(p.ID, petstore.Pending, 0)
	f.complete(o2.ID)
	f.wantPet(p.ID, petstore.Sold, 0)
}

func testCompleteWithStockLeft(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(5)
	o := f.order(f.account(petstore.Customer).ID, p.ID, 2)
	f.complete(o.ID)
	f.wantPet(p.ID, petstore.Available, 3)
}

func testCompleteRestockedPending(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(1)
	o := f.order(f.account(petstore.Customer).ID, p.ID, 1)
	_, err := f.s.SetInventory(f.ctx, p.ID, 4)
	must(t, err)
	f.wantPet(p.ID, petstore.Pending, 4)
	f.complete(o.ID)
	f.wantPet(p.ID, petstore.Available, 4)
}

func testUpdateShipDate(t *testing.T, open Opener) {
	f := setup(t, open)
	o := f.order(f.account(petstore.Customer).ID, f.availablePet(3).ID, 1)
	ship := inZone(microsecond(time.Now().Add(48*time.Hour)), 9)
	got, err := f.s.UpdateOrder(f.ctx, o.ID, petstore.OrderUpdate{ShipDate: &ship})
	must(t, err)
	if got.Complete || got.ShipDate == nil || !got.ShipDate.Equal(ship) {
		t.Errorf("order = %+v, want ship date %v", got, ship)
	}
	read, err := f.s.Order(f.ctx, o.ID, 0)
	must(t, err)
	if !sameOrder(read, got) {
		t.Errorf("read %+v, want %+v", read, got)
	}
}

func testUpdateShipDateAndComplete(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(3)
	o := f.order(f.account(petstore.Customer).ID, p.ID, 3)
	ship := microsecond(time.Now()).UTC()
	got, err := f.s.UpdateOrder(f.ctx, o.ID, petstore.OrderUpdate{ShipDate: &ship, Complete: ptr(true)})
	must(t, err)
	if !got.Complete || got.ShipDate == nil || !got.ShipDate.Equal(ship) {
		t.Errorf("order = %+v", got)
	}
	f.wantPet(p.ID, petstore.Sold, 0)
}

func testUpdateCompleteFalse(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(3)
	o := f.order(f.account(petstore.Customer).ID, p.ID, 3)
	got, err := f.s.UpdateOrder(f.ctx, o.ID, petstore.OrderUpdate{Complete: ptr(false)})
	must(t, err)
	if !sameOrder(got, o) {
		t.Errorf("order = %+v, want %+v", got, o)
	}
	f.wantPet(p.ID, petstore.Pending, 0)
}

func testUpdateShipDateOfComplete(t *testing.T, open Opener, shipped time.Time) {
	f := setup(t, open)
	o := f.order(f.account(petstore.Customer).ID, f.availablePet(2).ID, 1)
	f.complete(o.ID)
	_, err := f.s.UpdateOrder(f.ctx, o.ID, petstore.OrderUpdate{ShipDate: &shipped})
	wantCode(t, err, petstore.EInvalidTransition)
}

func testUpdateUnknownOrder(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.UpdateOrder(f.ctx, 999, petstore.OrderUpdate{Complete: ptr(true)})
	wantCode(t, err, petstore.ENotFound)
}
