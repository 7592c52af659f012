package storetest

import (
	"sync"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

func testConcurrency(t *testing.T, open Opener) {
	t.Run("concurrent orders sell exactly the stock and never more", func(t *testing.T) { testConcurrentOrders(t, open) })
	t.Run("concurrent cancellations and orders keep the stock and the orders in step", func(t *testing.T) { testConcurrentCancellations(t, open) })
}

func testConcurrentOrders(t *testing.T, open Opener) {
	f := setup(t, open)
	const (
		stock   = 50
		buyers  = 200
		maxEach = 5
	)
	var accounts []int64
	for range 7 {
		accounts = append(accounts, f.account(petstore.Customer).ID)
	}
	p := f.availablePet(stock)

	// Each buyer orders its quantity until refused; after insufficient_stock it
	// tries single units, so the buyers stop only when a single unit is refused,
	// that is once the stock is gone (sold out is insufficient_stock, whatever
	// status it gave the pet).
	var (
		mu       sync.Mutex
		sold     int
		accepted int
		refusals = map[string]int{}
		wg       sync.WaitGroup
		gate     = make(chan struct{})
	)
	for i := range buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate // start together
			quantity := 1 + i%maxEach
			for {
				_, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: accounts[i%len(accounts)], PetID: p.ID, Quantity: quantity})
				code := petstore.ErrorCode(err)
				mu.Lock()
				if err == nil {
					sold += quantity
					accepted++
				} else {
					refusals[code]++
				}
				mu.Unlock()
				switch {
				case err == nil:
				case code == petstore.EInsufficientStock && quantity > 1:
					quantity = 1
				default:
					// A single unit refused: the stock is gone. Anything but
					// insufficient_stock is reported below.
					return
				}
			}
		}()
	}
	close(gate)
	wg.Wait()

	for code, n := range refusals {
		if code != petstore.EInsufficientStock {
			t.Errorf("%d orders were refused with %s", n, code)
		}
	}
	if sold != stock {
		t.Errorf("accepted orders add up to %d, want %d", sold, stock)
	}
	f.wantPet(p.ID, petstore.Pending, 0)

	// The orders stored agree with the orders accepted.
	stored, quantity := f.placedOrders()
	if stored != accepted || quantity != stock {
		t.Errorf("%d orders of %d units are stored, want %d of %d", stored, quantity, accepted, stock)
	}
	t.Logf("%d orders accepted, refusals: %v", accepted, refusals)
}

func testConcurrentCancellations(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	p := f.availablePet(30)
	var first []petstore.Order
	for range 10 {
		first = append(first, f.order(a.ID, p.ID, 2))
	}
	var wg sync.WaitGroup
	for _, o := range first {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := f.s.CancelOrder(f.ctx, o.ID, a.ID); err != nil {
				t.Errorf("cancel: %v", err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: 1}); err != nil {
				t.Errorf("order: %v", err)
			}
		}()
	}
	wg.Wait()
	// 30 - 10×2 + 10×2 - 10×1
	f.wantPet(p.ID, petstore.Available, 20)
}

// placedOrders counts the placed orders in the store and the units they hold.
func (f *fixture) placedOrders() (orders, units int) {
	f.t.Helper()
	page := petstore.Page{Limit: 100}
	for {
		list, err := f.s.Orders(f.ctx, petstore.OrderFilter{Status: petstore.Placed}, page)
		must(f.t, err)
		for _, o := range list {
			orders++
			units += o.Quantity
		}
		if len(list) < page.Limit {
			return orders, units
		}
		page.After = list[len(list)-1].ID
	}
}
