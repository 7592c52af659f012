package storetest

import (
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

func testInventory(t *testing.T, open Opener) {
	t.Run("a new pet has nothing in stock", func(t *testing.T) { testInventoryOfNewPet(t, open) })
	t.Run("the inventory of an unknown pet is not found", func(t *testing.T) { testInventoryUnknownPet(t, open) })

	// Rule 6, through the store. Each case starts from a pet in a status with some
	// stock and open orders, sets the stock and checks the result.
	cases := []struct {
		test       string
		status     petstore.PetStatus
		openOrders int // each of quantity 1, placed before the stock is set
		set        int
		want       petstore.PetStatus
	}{
		{"restocking an available pet keeps it available", petstore.Available, 0, 5, petstore.Available},
		{"restocking a sold pet makes it available", petstore.Sold, 0, 3, petstore.Available},
		{"restocking a pending pet without open orders makes it available", petstore.Pending, 0, 3, petstore.Available},
		{"restocking a pending pet with open orders keeps it pending", petstore.Pending, 2, 3, petstore.Pending},
		{"emptying the stock of an available pet makes it sold", petstore.Available, 0, 0, petstore.Sold},
		{"emptying the stock of an available pet with open orders makes it pending", petstore.Available, 1, 0, petstore.Pending},
		{"emptying the stock of a sold pet keeps it sold", petstore.Sold, 0, 0, petstore.Sold},
		{"emptying the stock of a pending pet keeps it pending", petstore.Pending, 2, 0, petstore.Pending},
	}
	for _, c := range cases {
		t.Run(c.test, func(t *testing.T) {
			f := setup(t, open)
			var p petstore.Pet
			switch {
			case c.openOrders == 0:
				p = f.petWith(c.status, 0)
			case c.status == petstore.Pending:
				// Orders that take the whole stock make it pending.
				p = f.availablePet(c.openOrders)
				for range c.openOrders {
					f.order(f.account(petstore.Customer).ID, p.ID, 1)
				}
			default:
				// Orders that leave one in stock keep it available.
				p = f.availablePet(c.openOrders + 1)
				for range c.openOrders {
					f.order(f.account(petstore.Customer).ID, p.ID, 1)
				}
			}
			f.wantPet(p.ID, c.status, p.Stock-c.openOrders)
			it, err := f.s.SetInventory(f.ctx, p.ID, c.set)
			must(t, err)
			if it != (petstore.InventoryItem{PetID: p.ID, Quantity: c.set, Status: c.want}) {
				t.Errorf("set inventory = %+v, want quantity %d and %s", it, c.set, c.want)
			}
			f.wantPet(p.ID, c.want, c.set)
		})
	}

	for _, n := range []int{-1, petstore.MaxStock + 1} {
		t.Run("a stock out of range is refused and changes nothing", func(t *testing.T) {
			f := setup(t, open)
			p := f.availablePet(4)
			_, err := f.s.SetInventory(f.ctx, p.ID, n)
			wantField(t, err, "quantity")
			f.wantPet(p.ID, petstore.Available, 4)
		})
	}

	t.Run("the largest stock is accepted", func(t *testing.T) { testInventoryLargestStock(t, open) })

	// A stock never passes MaxStock, whatever is cancelled later: the units open
	// orders hold count towards it when the stock is set (petstore.PetState).
	t.Run("held units count towards the largest stock, so a cancellation cannot pass it", func(t *testing.T) { testInventoryHeldCount(t, open) })
	t.Run("units held by orders placed together count towards the largest stock", func(t *testing.T) { testInventoryHeldByBatch(t, open) })
	t.Run("setting the stock of an unknown pet is not found", func(t *testing.T) { testInventorySetUnknown(t, open) })
	t.Run("inventories are listed by pet id, a page at a time, with every filter applied", func(t *testing.T) { testInventoryListed(t, open) })
}

func testInventoryOfNewPet(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(0)
	it, err := f.s.Inventory(f.ctx, p.ID)
	must(t, err)
	if it != (petstore.InventoryItem{PetID: p.ID, Quantity: 0, Status: petstore.Available}) {
		t.Errorf("inventory = %+v", it)
	}
}

func testInventoryUnknownPet(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.Inventory(f.ctx, 999)
	wantCode(t, err, petstore.ENotFound)
}

func testInventoryLargestStock(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(0)
	_, err := f.s.SetInventory(f.ctx, p.ID, petstore.MaxStock)
	must(t, err)
	f.wantPet(p.ID, petstore.Available, petstore.MaxStock)
}

func testInventoryHeldCount(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(petstore.MaxStock)
	customer := f.account(petstore.Customer).ID
	cancelled := f.order(customer, p.ID, 100)
	completed := f.order(customer, p.ID, 40)
	_, err := f.s.SetInventory(f.ctx, p.ID, petstore.MaxStock)
	wantCode(t, err, petstore.EConflict)
	f.wantPet(p.ID, petstore.Available, petstore.MaxStock-140)
	_, err = f.s.SetInventory(f.ctx, p.ID, petstore.MaxStock-139)
	wantCode(t, err, petstore.EConflict)
	_, err = f.s.SetInventory(f.ctx, p.ID, petstore.MaxStock-140)
	must(t, err)
	must(t, f.s.CancelOrder(f.ctx, cancelled.ID, 0))
	f.wantPet(p.ID, petstore.Available, petstore.MaxStock-40)
	// A completed order's units leave the shop: they no longer count.
	f.complete(completed.ID)
	_, err = f.s.SetInventory(f.ctx, p.ID, petstore.MaxStock)
	must(t, err)
	f.wantPet(p.ID, petstore.Available, petstore.MaxStock)
}

func testInventoryHeldByBatch(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(petstore.MaxStock)
	customer := f.account(petstore.Customer).ID
	var orders []petstore.Order
	for range 5 {
		orders = append(orders, f.order(customer, p.ID, 100))
	}
	_, err := f.s.SetInventory(f.ctx, p.ID, petstore.MaxStock-499)
	wantCode(t, err, petstore.EConflict)
	_, err = f.s.SetInventory(f.ctx, p.ID, petstore.MaxStock-500)
	must(t, err)
	for _, o := range orders {
		must(t, f.s.CancelOrder(f.ctx, o.ID, 0))
	}
	f.wantPet(p.ID, petstore.Available, petstore.MaxStock)
}

func testInventorySetUnknown(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.SetInventory(f.ctx, 999, 1)
	wantCode(t, err, petstore.ENotFound)
}

func testInventoryListed(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.availablePet(5)
	s := f.petWith(petstore.Sold, 0)
	b := f.availablePet(2)
	c := f.availablePet(1)
	cases := []struct {
		test   string
		filter petstore.InventoryFilter
		page   petstore.Page
		want   []int64
	}{
		{"all", petstore.InventoryFilter{}, petstore.Page{Limit: 100}, []int64{a.ID, s.ID, b.ID, c.ID}},
		{"the first page", petstore.InventoryFilter{}, petstore.Page{Limit: 3}, []int64{a.ID, s.ID, b.ID}},
		{"the next page", petstore.InventoryFilter{}, petstore.Page{Limit: 3, After: b.ID}, []int64{c.ID}},
		{"available", petstore.InventoryFilter{Status: petstore.Available}, petstore.Page{Limit: 100}, []int64{a.ID, b.ID, c.ID}},
		{"available, paged", petstore.InventoryFilter{Status: petstore.Available}, petstore.Page{Limit: 1, After: a.ID}, []int64{b.ID}},
		{"sold", petstore.InventoryFilter{Status: petstore.Sold}, petstore.Page{Limit: 100}, []int64{s.ID}},
		{"pending", petstore.InventoryFilter{Status: petstore.Pending}, petstore.Page{Limit: 100}, nil},
		{"by ids, in id order, unknown ids left out", petstore.InventoryFilter{IDs: []int64{c.ID, 999, a.ID}}, petstore.Page{Limit: 100}, []int64{a.ID, c.ID}},
		{"by ids and status", petstore.InventoryFilter{IDs: []int64{a.ID, s.ID, c.ID}, Status: petstore.Available}, petstore.Page{Limit: 100}, []int64{a.ID, c.ID}},
		{"by ids, paged", petstore.InventoryFilter{IDs: []int64{a.ID, s.ID, b.ID, c.ID}}, petstore.Page{Limit: 2, After: s.ID}, []int64{b.ID, c.ID}},
		{"by ids that match no pet", petstore.InventoryFilter{IDs: []int64{998, 999}}, petstore.Page{Limit: 100}, nil},
	}
	for _, tc := range cases {
		got, err := f.s.Inventories(f.ctx, tc.filter, tc.page)
		must(t, err)
		if !sameIDs(ids(got, itemID), tc.want) {
			t.Errorf("%s: got %v, want %v", tc.test, ids(got, itemID), tc.want)
		}
	}
	got, err := f.s.Inventories(f.ctx, petstore.InventoryFilter{Status: petstore.Sold}, petstore.Page{Limit: 1})
	must(t, err)
	if len(got) != 1 || got[0] != (petstore.InventoryItem{PetID: s.ID, Quantity: 0, Status: petstore.Sold}) {
		t.Errorf("listed %+v", got)
	}
	got, err = f.s.Inventories(f.ctx, petstore.InventoryFilter{IDs: []int64{b.ID}}, petstore.Page{Limit: 1})
	must(t, err)
	if len(got) != 1 || got[0] != (petstore.InventoryItem{PetID: b.ID, Quantity: 2, Status: petstore.Available}) {
		t.Errorf("listed %+v", got)
	}
}
