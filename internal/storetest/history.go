package storetest

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// testHistory: an order keeps what it was placed with whatever happens to its pet
// later, a pet with orders is archived rather than erased, a cancel racing a
// completion leaves one outcome, and the sales report adds up to the orders.
func testHistory(t *testing.T, open Opener) {
	t.Run("an order keeps its price and pet name through a price change, a rename and the pet's deletion", func(t *testing.T) { testHistoryKeepsOrder(t, open) })
	t.Run("a shop with orders keeps its currency", func(t *testing.T) { testHistoryKeepsCurrency(t, open) })
	t.Run("a pet never ordered is erased", func(t *testing.T) { testHistoryErasesUnorderedPet(t, open) })
	t.Run("a cancel racing a completion leaves one outcome, with the stock and the report to match", func(t *testing.T) { testHistoryCancelRacingCompletion(t, open) })
	t.Run("the sales report adds up to the orders, by day, pet and category", func(t *testing.T) { testSalesReport(t, open) })
}

func testHistoryKeepsOrder(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(5)
	o := f.order(a.ID, p.ID, 2)
	_, err := f.s.UpdatePet(f.ctx, p.ID, func(pf petstore.PetFields) (petstore.PetFields, error) {
		pf.Name, pf.Price = name("Renamed"), Price(5)
		return pf, nil
	})
	must(t, err)
	f.complete(o.ID)
	must(t, f.s.DeletePet(f.ctx, p.ID))
	got, err := f.s.Order(f.ctx, o.ID, a.ID)
	must(t, err)
	if got.PetName != p.Name || *got.UnitPrice != *p.Price || *got.Total() != 2**p.Price || got.Status != petstore.Completed || got.CompletedAt == nil {
		t.Errorf("the order reads %+v; want it as placed: %s at %d, completed", got, p.Name, *p.Price)
	}
	// Archived: out of the catalogue and not for sale, but still named by the report.
	_, err = f.s.Pet(f.ctx, p.ID)
	wantCode(t, err, petstore.ENotFound)
	_, err = f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: 1})
	wantCode(t, err, petstore.ENotFound)
	if list, err := f.s.Pets(f.ctx, petstore.PetFilter{IDs: []int64{p.ID}}, petstore.Page{Limit: 10}); err != nil || len(list) != 0 {
		t.Errorf("the archived pet is listed: %+v, %v", list, err)
	}
	wantCode(t, f.s.DeletePet(f.ctx, p.ID), petstore.ENotFound)
	day := o.CreatedAt.UTC()
	r, err := f.s.SalesReport(f.ctx, petstore.SalesQuery{From: day, To: day, GroupBy: petstore.ByPet, Limit: 10})
	must(t, err)
	if len(r.Groups) != 1 || r.Groups[0].PetID != p.ID || r.Groups[0].PetName == "" || r.Groups[0].Revenue != 2**p.Price {
		t.Errorf("the report by pet is %+v", r.Groups)
	}
	// Its category can go: an archived pet does not hold it.
	must(t, f.s.DeleteCategory(f.ctx, p.CategoryID))
}

func testHistoryKeepsCurrency(t *testing.T, open Opener) {
	f := setup(t, open)
	must(t, f.s.SetCurrency(f.ctx, "JPY"))
	must(t, f.s.SetCurrency(f.ctx, "USD")) // no orders yet: any
	o := f.order(f.account(petstore.Customer).ID, f.availablePet(1).ID, 1)
	if o.Currency != "USD" || f.s.Currency() != "USD" {
		t.Errorf("an order placed in %q, the shop in %q; want USD", o.Currency, f.s.Currency())
	}
	must(t, f.s.SetCurrency(f.ctx, "USD"))
	wantCode(t, f.s.SetCurrency(f.ctx, "EUR"), petstore.EConflict)
	if f.s.Currency() != "USD" {
		t.Errorf("a refused change left the currency %q", f.s.Currency())
	}
}

func testHistoryErasesUnorderedPet(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(1)
	must(t, f.s.DeletePet(f.ctx, p.ID))
	_, err := f.s.Pet(f.ctx, p.ID)
	wantCode(t, err, petstore.ENotFound)
}

func testHistoryCancelRacingCompletion(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(40)
	var orders []petstore.Order
	for range 20 {
		orders = append(orders, f.order(a.ID, p.ID, 2))
	}
	var wg sync.WaitGroup
	for _, o := range orders {
		wg.Add(2)
		go func() {
			defer wg.Done()
			err := f.s.CancelOrder(f.ctx, o.ID, 0)
			if err != nil && petstore.ErrorCode(err) != petstore.EConflict {
				t.Errorf("cancel: %v", err)
			}
		}()
		go func() {
			defer wg.Done()
			_, err := f.s.UpdateOrder(f.ctx, o.ID, petstore.OrderUpdate{Complete: ptr(true)})
			if err != nil && petstore.ErrorCode(err) != petstore.EInvalidTransition {
				t.Errorf("complete: %v", err)
			}
		}()
	}
	wg.Wait()
	var cancelled, completed int64
	for _, o := range orders {
		got, err := f.s.Order(f.ctx, o.ID, 0)
		must(t, err)
		switch {
		case got.Status == petstore.Cancelled && got.CancelledAt != nil && got.CompletedAt == nil && !got.Complete:
			cancelled++
		case got.Status == petstore.Completed && got.CompletedAt != nil && got.CancelledAt == nil && got.Complete:
			completed++
		default:
			t.Errorf("order %d ended as %+v", o.ID, got)
		}
	}
	// Cancelled units are back on the shelf; completed ones left the shop.
	f.wantPet(p.ID, petstore.PetStatus(map[bool]petstore.PetStatus{true: petstore.Sold, false: petstore.Available}[cancelled == 0]), int(2*cancelled))
	day := orders[0].CreatedAt.UTC()
	r, err := f.s.SalesReport(f.ctx, petstore.SalesQuery{From: day, To: day, GroupBy: petstore.ByDay})
	must(t, err)
	want := petstore.SalesFigures{Orders: completed, Units: 2 * completed, Revenue: 2 * completed * *p.Price,
		CancelledOrders: cancelled, CancelledUnits: 2 * cancelled, CancelledRevenue: 2 * cancelled * *p.Price}
	if r.Totals != want {
		t.Errorf("report totals %+v, want %+v", r.Totals, want)
	}
}

func testSalesReport(t *testing.T, open Opener) {
	c := &clock{now: time.Date(2026, 3, 1, 22, 0, 0, 0, time.UTC)}
	f := setupWith(t, open, Hooks{Now: c.Now})
	placed := placeRandomOrders(f, c)
	// A scan in Go of the orders between two days.
	from := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	to := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
	scan := scanSales(placed, from, to)
	for _, by := range []petstore.SalesGrouping{petstore.ByDay, petstore.ByPet, petstore.ByCategory} {
		wantSalesReport(f, petstore.SalesQuery{From: from, To: to, GroupBy: by, Limit: 100}, scan)
	}
	// The limit keeps the groups with the most revenue.
	r, err := f.s.SalesReport(f.ctx, petstore.SalesQuery{From: from, To: to, GroupBy: petstore.ByPet, Limit: 2})
	must(t, err)
	if len(r.Groups) != min(2, len(scan.byPet)) || r.Totals != scan.total {
		t.Errorf("limited to 2: %d groups, totals %+v", len(r.Groups), r.Totals)
	}
}

// placeRandomOrders places 200 orders of 5 pets, a few hours apart on c, changing a
// price now and then, and cancels or completes some of them. It returns the orders
// as they ended.
func placeRandomOrders(f *fixture, c *clock) []petstore.Order {
	t := f.t
	rng := rand.New(rand.NewPCG(31, 1))
	a := f.account(petstore.Customer)
	var pets []petstore.Pet
	for range 5 {
		pets = append(pets, f.availablePet(10_000))
	}
	var placed []petstore.Order
	for range 200 {
		c.Set(c.Now().Add(time.Duration(rng.IntN(5)) * time.Hour))
		p := pets[rng.IntN(len(pets))]
		if rng.IntN(10) == 0 {
			_, err := f.s.UpdatePet(f.ctx, p.ID, func(pf petstore.PetFields) (petstore.PetFields, error) {
				pf.Price = Price(int64(rng.IntN(5000)))
				return pf, nil
			})
			must(t, err)
		}
		o := f.order(a.ID, p.ID, 1+rng.IntN(3))
		switch rng.IntN(4) {
		case 0:
			must(t, f.s.CancelOrder(f.ctx, o.ID, 0))
			o.Status = petstore.Cancelled
		case 1:
			f.complete(o.ID)
		}
		placed = append(placed, o)
	}
	return placed
}

// salesScan is what a sales report should say, added up in Go.
type salesScan struct {
	total        petstore.SalesFigures
	byDay        map[string]petstore.SalesFigures
	byPet, byCat map[int64]petstore.SalesFigures
}

// scanSales adds up the orders placed from the day from to the day to.
func scanSales(placed []petstore.Order, from, to time.Time) salesScan {
	s := salesScan{byDay: map[string]petstore.SalesFigures{}, byPet: map[int64]petstore.SalesFigures{}, byCat: map[int64]petstore.SalesFigures{}}
	for _, o := range placed {
		d := o.CreatedAt.UTC()
		if d.Before(from) || !d.Before(to.AddDate(0, 0, 1)) {
			continue
		}
		var g petstore.SalesFigures
		if o.Status == petstore.Cancelled {
			g = petstore.SalesFigures{CancelledOrders: 1, CancelledUnits: int64(o.Quantity), CancelledRevenue: *o.Total()}
		} else {
			g = petstore.SalesFigures{Orders: 1, Units: int64(o.Quantity), Revenue: *o.Total()}
		}
		s.total.Add(g)
		add := func(m map[string]petstore.SalesFigures, k string) { v := m[k]; v.Add(g); m[k] = v }
		add(s.byDay, petstore.SalesDay(d))
		v := s.byPet[o.PetID]
		v.Add(g)
		s.byPet[o.PetID] = v
		v = s.byCat[o.CategoryID]
		v.Add(g)
		s.byCat[o.CategoryID] = v
	}
	return s
}

// groups returns the scan's figures for the grouping, by day, pet id or category id.
func (s salesScan) groups(by petstore.SalesGrouping) map[any]petstore.SalesFigures {
	want := map[any]petstore.SalesFigures{}
	switch by {
	case petstore.ByDay:
		for k, v := range s.byDay {
			want[k] = v
		}
	case petstore.ByPet:
		for k, v := range s.byPet {
			want[k] = v
		}
	default:
		for k, v := range s.byCat {
			want[k] = v
		}
	}
	return want
}

// wantSalesReport checks the store's report for q against the scan: its totals, its
// groups, and their order (days in order, the others by revenue, most first).
func wantSalesReport(f *fixture, q petstore.SalesQuery, scan salesScan) {
	t, by := f.t, q.GroupBy
	t.Helper()
	r, err := f.s.SalesReport(f.ctx, q)
	must(t, err)
	if r.Totals != scan.total {
		t.Errorf("by %s: totals %+v, want %+v", by, r.Totals, scan.total)
	}
	got := map[any]petstore.SalesFigures{}
	for i, g := range r.Groups {
		switch by {
		case petstore.ByDay:
			got[petstore.SalesDay(g.Day)] = g.SalesFigures
			if i > 0 && !r.Groups[i-1].Day.Before(g.Day) {
				t.Errorf("by day: %v after %v", g.Day, r.Groups[i-1].Day)
			}
		case petstore.ByPet:
			got[g.PetID] = g.SalesFigures
		default:
			got[g.CategoryID] = g.SalesFigures
		}
		if i > 0 && by != petstore.ByDay && r.Groups[i-1].Revenue < g.Revenue {
			t.Errorf("by %s: revenue %d after %d", by, g.Revenue, r.Groups[i-1].Revenue)
		}
	}
	want := scan.groups(by)
	if len(got) != len(want) {
		t.Errorf("by %s: %d groups, want %d", by, len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("by %s: group %v is %+v, want %+v", by, k, got[k], v)
		}
	}
}
