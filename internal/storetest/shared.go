package storetest

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Shared runs the tests of several stores on one database, standing for server
// processes that share it. open returns n new stores on one new, empty database,
// opened at once (as processes starting together would, so that they migrate it
// together), and closes them when the test ends.
func Shared(t *testing.T, open func(t *testing.T, n int) []petstore.Store) {
	for _, st := range []struct {
		name string
		run  func(t *testing.T, stores []petstore.Store)
	}{
		{"batches, cancellations and completions over shared pets never deadlock and keep the stock", testSharedPets},
	} {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			st.run(t, open(t, 2))
		})
	}
	t.Run("processes placing orders with one key place one order per key", func(t *testing.T) {
		t.Parallel()
		stores := open(t, 2)
		f := &fixture{t: t, ctx: t.Context(), s: stores[0]}
		a := f.account(petstore.Customer)
		p := f.availablePet(100)
		wantOneOrderPerKey(t, stores, a.ID, p.ID, 40, 4)
		f.wantPet(p.ID, petstore.Available, 96)
	})
	t.Run("processes starting together all migrate", func(t *testing.T) {
		t.Parallel()
		for i, st := range open(t, 4) {
			if err := st.Ping(t.Context()); err != nil {
				t.Errorf("store %d: %v", i, err)
			}
		}
	})
	t.Run("two processes never oversell, and the orders stored are the ones accepted", func(t *testing.T) {
		t.Parallel()
		testNeverOversell(t, open(t, 2))
	})
	t.Run("one process cancelling another's orders keeps stock and open orders in step", func(t *testing.T) {
		t.Parallel()
		testCancelAcross(t, open(t, 2))
	})
	t.Run("processes placing orders and claiming deliveries together deliver each order.placed once per endpoint", func(t *testing.T) {
		t.Parallel()
		testSharedDeliveries(t, open(t, 2))
	})
	t.Run("a key revoked in one process fails at once in another", func(t *testing.T) {
		t.Parallel()
		stores := open(t, 2)
		f := &fixture{t: t, ctx: t.Context(), s: stores[0]}
		a := f.account(petstore.Customer)
		k, err := stores[0].CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_", Hash: []byte("shared-h")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stores[1].PrincipalByKeyHash(f.ctx, []byte("shared-h")); err != nil {
			t.Fatal(err)
		}
		if err := stores[0].RevokeAPIKey(f.ctx, a.ID, k.ID, petstore.Actor{}); err != nil {
			t.Fatal(err)
		}
		if _, err := stores[1].PrincipalByKeyHash(f.ctx, []byte("shared-h")); petstore.ErrorCode(err) != petstore.ENotFound {
			t.Errorf("the other process still accepts the key: %v", err)
		}
	})
}

// testNeverOversell has two stores sell one pet's stock to 100 concurrent orders: the
// units sold and the units left add up to the stock, and the orders stored are exactly
// the ones accepted.
func testNeverOversell(t *testing.T, stores []petstore.Store) {
	f := &fixture{t: t, ctx: t.Context(), s: stores[0]}
	a := f.account(petstore.Customer)
	const stock = 40
	p := f.availablePet(stock)
	var (
		sold, accepted atomic.Int64
		wg             sync.WaitGroup
		gate           = make(chan struct{})
	)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			q := 1 + i%3
			_, err := stores[i%2].PlaceOrder(f.ctx, petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: q})
			switch petstore.ErrorCode(err) {
			case petstore.EInsufficientStock, petstore.EInvalidTransition:
			default:
				if err != nil {
					t.Errorf("order: %v", err)
					return
				}
				sold.Add(int64(q))
				accepted.Add(1)
			}
		}()
	}
	close(gate)
	wg.Wait()
	got, err := stores[1].Pet(f.ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Stock < 0 || int(sold.Load())+got.Stock != stock {
		t.Errorf("sold %d and %d left of %d", sold.Load(), got.Stock, stock)
	}
	orders, err := stores[0].Orders(f.ctx, petstore.OrderFilter{}, petstore.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var quantity int
	for _, o := range orders {
		quantity += o.Quantity
	}
	if len(orders) != int(accepted.Load()) || quantity != int(sold.Load()) {
		t.Errorf("%d orders of %d units are stored, want %d of %d", len(orders), quantity, accepted.Load(), sold.Load())
	}
	if got.Stock == 0 && got.Status != petstore.Pending {
		t.Errorf("the pet is %s with no stock left, want pending", got.Status)
	}
}

// testCancelAcross has orders placed through one store and cancelled through the
// other: what is in stock and what is in open orders always add up to the stock.
func testCancelAcross(t *testing.T, stores []petstore.Store) {
	f := &fixture{t: t, ctx: t.Context(), s: stores[0]}
	a := f.account(petstore.Customer)
	const stock = 30
	p := f.availablePet(stock)
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := stores[i%2].PlaceOrder(f.ctx, petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: 1 + i%4})
			if err != nil {
				if c := petstore.ErrorCode(err); c != petstore.EInsufficientStock && c != petstore.EInvalidTransition {
					t.Errorf("order: %v", err)
				}
				return
			}
			if i%3 != 0 {
				if err := stores[(i+1)%2].CancelOrder(f.ctx, o.Order.ID, a.ID); err != nil {
					t.Errorf("cancel: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	got := f.pet(p.ID)
	var open []petstore.Order
	for page := (petstore.Page{Limit: 100}); ; {
		list, err := stores[1].Orders(f.ctx, petstore.OrderFilter{Status: petstore.Placed}, page)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, list...)
		if len(list) < page.Limit {
			break
		}
		page.After = list[len(list)-1].ID
	}
	ordered := 0
	for _, o := range open {
		ordered += o.Quantity
	}
	if got.Stock+ordered != stock {
		t.Errorf("%d in stock and %d in open orders, want %d in all", got.Stock, ordered, stock)
	}
	if want := map[bool]petstore.PetStatus{true: petstore.Pending, false: petstore.Available}[got.Stock == 0]; got.Status != want {
		t.Errorf("the pet is %s with %d in stock, want %s", got.Status, got.Stock, want)
	}
}

// testSharedPets has several stores place orders over a few shared pets (so that
// batches of different stores lock overlapping sets of pets), while others cancel and
// complete those orders (which lock an order, then its pet). No caller may get an
// error other than a refusal, and every pet's stock and orders add up.
func testSharedPets(t *testing.T, stores []petstore.Store) {
	f := &fixture{t: t, ctx: t.Context(), s: stores[0]}
	a := f.account(petstore.Customer)
	const stock = 200
	var pets []int64
	for range 4 {
		pets = append(pets, f.availablePet(stock).ID)
	}
	var (
		wg   sync.WaitGroup
		gate = make(chan struct{})
	)
	for w := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			st := stores[w%len(stores)]
			other := stores[(w+1)%len(stores)]
			yes := true
			for i := range 15 {
				pet := pets[(w*7+i*3)%len(pets)]
				o, err := st.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: a.ID, PetID: pet, Quantity: 1 + i%3})
				if c := petstore.ErrorCode(err); err != nil {
					if c != petstore.EInsufficientStock && c != petstore.EInvalidTransition {
						t.Errorf("order: %v", err)
					}
					continue
				}
				switch i % 3 {
				case 0:
					if err := other.CancelOrder(f.ctx, o.Order.ID, a.ID); err != nil {
						t.Errorf("cancel: %v", err)
					}
				case 1:
					if _, err := other.UpdateOrder(f.ctx, o.Order.ID, petstore.OrderUpdate{Complete: &yes}); err != nil {
						t.Errorf("complete: %v", err)
					}
				}
			}
		}()
	}
	close(gate)
	wg.Wait()
	ordered := map[int64]int{}
	for page := (petstore.Page{Limit: 100}); ; {
		list, err := stores[1%len(stores)].Orders(f.ctx, petstore.OrderFilter{}, page)
		must(t, err)
		for _, o := range list {
			if o.Status != petstore.Cancelled { // a cancelled order's units are back
				ordered[o.PetID] += o.Quantity
			}
		}
		if len(list) < page.Limit {
			break
		}
		page.After = list[len(list)-1].ID
	}
	for _, id := range pets {
		p := f.pet(id)
		if p.Stock+ordered[id] != stock {
			t.Errorf("pet %d: %d in stock and %d in orders, want %d in all", id, p.Stock, ordered[id], stock)
		}
	}
}

// wantOneOrderPerKey sends n orders of one unit of pet at once, spread over the
// stores and over the keys k0, k1, … (keys of them), and checks that each key placed
// exactly one order, which every request with that key got.
func wantOneOrderPerKey(t *testing.T, stores []petstore.Store, account, pet int64, n, keys int) {
	t.Helper()
	var (
		wg      sync.WaitGroup
		results = make([]petstore.PlacedOrder, n)
		errs    = make([]error, n)
		gate    = make(chan struct{})
	)
	key := func(i int) string { return "k" + strconv.Itoa(i%keys) }
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			results[i], errs[i] = stores[i%len(stores)].PlaceOrder(t.Context(), keyed(account, pet, 1, key(i)))
		}()
	}
	close(gate)
	wg.Wait()
	orders := map[string]int64{}
	fresh := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("request %d: %v", i, errs[i])
		}
		if !results[i].Replayed {
			fresh++
		}
		if id, ok := orders[key(i)]; ok && id != results[i].Order.ID {
			t.Errorf("key %s answered with orders %d and %d", key(i), id, results[i].Order.ID)
		}
		orders[key(i)] = results[i].Order.ID
	}
	if fresh != keys {
		t.Errorf("%d requests placed an order, want %d (one per key)", fresh, keys)
	}
}

// testSharedDeliveries has two stores place 300 orders at once while both claim and
// finish deliveries to three endpoints subscribed to order.placed: every order's event
// gets exactly one delivery per endpoint, each claimed once.
func testSharedDeliveries(t *testing.T, stores []petstore.Store) {
	f := &fixture{t: t, ctx: t.Context(), s: stores[0]}
	ws := make([]petstore.WebhookStore, len(stores))
	for i, st := range stores {
		ws[i] = st
	}
	const orders, endpoints = 300, 3
	for range endpoints {
		f.hook(petstore.OrderPlaced.Bit())
	}
	a := f.account(petstore.Customer)
	p := f.availablePet(orders)
	var (
		c       = &sharedClaims{claims: map[key]int{}, events: map[string]int{}}
		placing sync.WaitGroup
		wg      sync.WaitGroup
	)
	for i := range orders {
		placing.Add(1)
		go func() {
			defer placing.Done()
			if _, err := stores[i%len(stores)].PlaceOrder(f.ctx, petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: 1}); err != nil {
				t.Errorf("order: %v", err)
			}
		}()
	}
	// The claims run at a time far ahead of the events' (the stores' clocks), so
	// that every delivery is due.
	now := time.Now().Add(time.Hour)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.claimAll(f, ws[i%len(ws)], now, orders*endpoints)
		}()
	}
	placing.Wait()
	c.placed.Store(true)
	wg.Wait()
	if len(c.events) != orders || len(c.claims) != orders*endpoints {
		t.Errorf("%d deliveries of %d events were claimed, want %d of %d", len(c.claims), len(c.events), orders*endpoints, orders)
	}
	for id, n := range c.claims {
		if n != 1 {
			t.Errorf("delivery %d was claimed %d times", id, n)
		}
	}
	for id, n := range c.events {
		if n != endpoints {
			t.Errorf("event %s was delivered %d times, want %d", id, n, endpoints)
		}
	}
}

// sharedClaims counts what the claimers of testSharedDeliveries claimed.
type sharedClaims struct {
	mu     sync.Mutex
	claims map[key]int    // claims of each delivery
	events map[string]int // deliveries claimed of each event
	placed atomic.Bool    // every order is placed
}

// claimAll claims deliveries from w and finishes them as succeeded, until every
// order is placed and want deliveries were claimed, or for a minute at most.
func (c *sharedClaims) claimAll(f *fixture, w petstore.WebhookStore, now time.Time, want int) {
	t := f.t
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		c.mu.Lock()
		all := len(c.claims) >= want
		c.mu.Unlock()
		if all && c.placed.Load() {
			return
		}
		jobs, err := w.ClaimDeliveries(f.ctx, petstore.ClaimOptions{Now: now, Lease: time.Hour, Max: 10, Window: 4})
		if err != nil {
			t.Error(err)
			return
		}
		if len(jobs) == 0 {
			// PostgreSQL shows an event to claims once every transaction begun
			// before it has ended: the orders may be placed and not yet shown.
			time.Sleep(time.Millisecond)
		}
		var rs []petstore.AttemptResult
		c.mu.Lock()
		for _, j := range jobs {
			c.claims[key{j.Webhook.ID, j.Delivery.ID}]++
			c.events[j.Event.ID]++
			rs = append(rs, succeeded(j.Webhook.ID, j.Delivery.ID, now))
		}
		c.mu.Unlock()
		if err := w.FinishAttempts(f.ctx, rs); err != nil {
			t.Error(err)
			return
		}
	}
	t.Error("the claims did not finish in time")
}
