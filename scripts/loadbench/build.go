package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The scale run's databases are built through the stores' own Go API (CreatePet,
// SetInventory, PlaceOrder…), not through HTTP: the rows, events included, are the
// ones the API would write, because the same store code writes them, and a million
// orders take minutes instead of the better part of an hour.

// shape is the size of a database that build makes.
type shape struct {
	name         string
	pets, orders int
}

// customers is how many customer accounts share the orders: one per hundred pets,
// so that the customer the benchmark reads as has about as many orders in the small
// database as in the large one, and its list measures the index, not the count.
func (s shape) customers() int { return max(1, s.pets/100) }

// The rare name: rarePets pets carry it among any number of others, so that a
// search for it returns the same page on every database and only the search's
// cost can differ.
const (
	rareName     = "zephyr"
	rareTag      = "rare"
	rarePets     = 5
	benchStock   = 1_000_000
	customerMail = "customer0@bench.example"
)

// built is what the scenarios need to know of a database that build made.
type built struct {
	shape
	lo, hi     int64 // the pets' ids
	soldFrom   int64 // pets from this id on are sold (stock 0); those before are available
	deepPets   string
	deepEvents string
	took       time.Duration
}

// build fills an empty store with s: one category, the customers, s.pets pets (the
// last 1% sold, the rest with a large stock), and s.orders orders of one unit over
// the available pets, placed concurrently so that the placement loop batches them
// as it batches a busy shop's.
func build(ctx context.Context, st petstore.Store, s shape, log io.Writer) (built, error) {
	start := time.Now()
	b := built{shape: s}
	cat, err := st.CreateCategory(ctx, petstore.Category{Name: "Bench"})
	if err != nil {
		return b, err
	}
	accounts := make([]int64, s.customers())
	for i := range accounts {
		a, err := st.EnsureAccount(ctx, fmt.Sprintf("customer%d@bench.example", i), petstore.Customer)
		if err != nil {
			return b, err
		}
		accounts[i] = a.ID
	}

	if b.lo, b.hi, err = createPets(ctx, st, s, cat.ID, log); err != nil {
		return b, err
	}
	// The sold pets are the last ids: a status filter that walks the pets by id
	// instead of by an index reads nearly all of them before it finds one.
	b.soldFrom = b.hi - int64(max(1, s.pets/100)) + 1
	err = parallel(ctx, s.pets, 16, progress(log, s.name+": stock", s.pets), func(i int) error {
		id, stock := b.lo+int64(i), benchStock
		if id >= b.soldFrom {
			stock = 0 // an available pet without orders restocked to 0 is sold
		}
		_, err := st.SetInventory(ctx, id, stock)
		return err
	})
	if err != nil {
		return b, fmt.Errorf("set stock: %w", err)
	}

	available := b.soldFrom - b.lo
	place := func(from, to int) error {
		return parallel(ctx, to-from, 256, progress(log, s.name+": orders", to-from), func(i int) error {
			i += from
			// A stride prime to the count visits every pet once per round, in an
			// order that sends neighbouring requests to different pets, as
			// customers would.
			pet := b.lo + int64(i)*7919%available
			_, err := st.PlaceOrder(ctx, petstore.NewOrder{AccountID: accounts[i%len(accounts)], PetID: pet, Quantity: 1})
			return err
		})
	}
	// The deep cursor of the feed is taken after nine tenths of the orders: feed
	// positions are not counts (on PostgreSQL they are transaction ids, and each
	// pet took a transaction of its own), so only the feed's end at that moment is
	// a position nine tenths in.
	deep := s.orders * 9 / 10
	if err := place(0, deep); err != nil {
		return b, fmt.Errorf("place orders: %w", err)
	}
	last, err := lastEvent(ctx, st)
	if err != nil {
		return b, err
	}
	b.deepEvents = petstore.EncodeCursor(last)
	if err := place(deep, s.orders); err != nil {
		return b, fmt.Errorf("place orders: %w", err)
	}
	b.deepPets = petstore.EncodeCursor(b.lo + int64(s.pets)*9/10)
	b.took = time.Since(start)
	return b, nil
}

// createPets creates the s.pets pets of build in category, available, and returns
// the first and last of their ids, which are consecutive.
func createPets(ctx context.Context, st petstore.Store, s shape, category int64, log io.Writer) (lo, hi int64, err error) {
	ids := make([]int64, s.pets)
	err = parallel(ctx, s.pets, 16, progress(log, s.name+": pets", s.pets), func(i int) error {
		name := fmt.Sprintf("Pet %d", i)
		// Spread over the ids, so that a scan that stops early still reads most.
		if i%(s.pets/rarePets) == s.pets/rarePets/2 {
			name = fmt.Sprintf("Zephyr %d", i)
		}
		// Tags: "friendly" on every other pet (a common tag), "rare" on the rare
		// name's (a tag search for it returns the same page on every database).
		var tags []string
		if i%2 == 0 {
			tags = append(tags, "friendly")
		}
		if strings.HasPrefix(name, "Zephyr") {
			tags = append(tags, rareTag)
		}
		price := int64(100 + i%900)
		p, err := st.CreatePet(ctx, petstore.PetFields{Name: name, CategoryID: category, Status: petstore.Available, Price: &price, Tags: tags})
		ids[i] = p.ID
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("create pets: %w", err)
	}
	slices.Sort(ids)
	lo, hi = ids[0], ids[len(ids)-1]
	if hi-lo+1 != int64(s.pets) {
		return 0, 0, fmt.Errorf("the pets' ids are not consecutive (%d to %d)", lo, hi)
	}
	return lo, hi, nil
}

// lastEvent finds the feed's last position by bisection over the feed itself, the
// one reading of positions the stores offer.
func lastEvent(ctx context.Context, st petstore.Store) (int64, error) {
	has := func(after int64) (bool, error) {
		e, err := st.Events(ctx, petstore.EventFilter{}, petstore.Page{After: after, Limit: 1})
		return len(e) > 0, err
	}
	hi := int64(1)
	for {
		ok, err := has(hi)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		hi *= 2
	}
	lo := int64(0) // has(lo) holds (or lo is 0), has(hi) does not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := has(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}

// parallel calls f(0)…f(n-1) from workers goroutines and returns the first error;
// after one, the remaining calls are not made. tick is called after each success.
func parallel(ctx context.Context, n, workers int, tick func(), f func(int) error) error {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
				tick()
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// progress returns a tick that prints how far a long step has come every 10 seconds.
func progress(log io.Writer, what string, n int) func() {
	var (
		done atomic.Int64
		mu   sync.Mutex
	)
	start := time.Now()
	last := start
	return func() {
		d := done.Add(1)
		if d%1024 != 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(last) >= 10*time.Second {
			last = now
			fmt.Fprintf(log, "  %s: %d of %d (%.0f/s)\n", what, d, n, float64(d)/now.Sub(start).Seconds())
		}
	}
}
