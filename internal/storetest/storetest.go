// Package storetest is the behaviour suite that every petstore.Store implementation
// passes: the same tests run on SQLite and on PostgreSQL.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Opener returns a new, empty, migrated store that only the calling test uses, set up
// with the hooks, and registers its own clean-up (closing the store) on t.
type Opener func(t *testing.T, h Hooks) petstore.Store

// Hooks are what some tests need to set on a store beyond petstore.Store. Zero
// fields leave the store as the service runs it.
type Hooks struct {
	// Now replaces the store's clock.
	Now func() time.Time
	// BeforeCommit runs before each batch of orders commits; an error fails the
	// batch as a failed commit would. A store with several placement loops uses one
	// when it is set, so that the batch tests know which requests share a batch.
	BeforeCommit func() error
	// PurgeChunk, when set, is how many rows a purge deletes per transaction, and
	// Purged is told the size of each full chunk it deletes.
	PurgeChunk int
	Purged     func(int64)
}

// Run runs the whole suite against the stores that open returns. Every test opens
// its own store, and the tests run in parallel.
//
// Times are expected to round-trip to the microsecond (the precision of PostgreSQL)
// and to come back in UTC.
func Run(t *testing.T, open Opener) {
	groups := []struct {
		name string
		run  func(*testing.T, Opener)
	}{
		{"accounts", testAccounts},
		{"account administration", testAccountAdmin},
		{"accounts by role", testAccountRoles},
		{"invitation and reset tokens", testTokens},
		{"where passwords came from", testPasswordSource},
		{"api keys", testKeys},
		{"the cap on keys", testKeyCap},
		{"caps under parallel writes", testParallelCaps},
		{"the delivery window", testWindowCaps},
		{"api key events", testKeyEvents},
		{"messages", testMessages},
		{"categories", testCategories},
		{"pets", testPets},
		{"name search", testNameSearch},
		{"descriptions and tags", testTags},
		{"photos of pets", testPhotos},
		{"inventory", testInventory},
		{"orders", testOrders},
		{"order updates", testOrderUpdates},
		{"the stock model", testStockModel},
		{"order history and sales", testHistory},
		{"idempotency keys", testIdempotency},
		{"concurrency", testConcurrency},
		{"batched orders", testBatches},
		{"the database", testDatabase},
		{"events", testEvents},
		{"events by type, for limited keys", testScopedEvents},
		{"webhooks", testWebhooks},
		{"deliveries", testDeliveries},
		{"the webhook queue, reviewed", testQueueReview},
		{"chunked purge", testChunkedPurge},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, open)
		})
	}
}

// fixture is one test's store with helpers that build what the test needs.
type fixture struct {
	t   *testing.T
	ctx context.Context
	s   petstore.Store
}

var unique atomic.Int64

// setup marks the test parallel and opens its store.
func setup(t *testing.T, open Opener) *fixture {
	t.Helper()
	return setupWith(t, open, Hooks{})
}

// setupWith is setup with hooks on the store.
func setupWith(t *testing.T, open Opener, h Hooks) *fixture {
	t.Helper()
	t.Parallel()
	return &fixture{t: t, ctx: t.Context(), s: open(t, h)}
}

// name returns a name no other call returns.
func name(prefix string) string {
	return fmt.Sprintf("%s %d", prefix, unique.Add(1))
}

func (f *fixture) account(role petstore.Role) petstore.Account {
	f.t.Helper()
	a, err := f.s.CreateAccount(f.ctx, fmt.Sprintf("user%d@example.com", unique.Add(1)), "hash", role)
	if err != nil {
		f.t.Fatalf("create account: %v", err)
	}
	return a
}

func (f *fixture) category() petstore.Category {
	f.t.Helper()
	c, err := f.s.CreateCategory(f.ctx, petstore.Category{Name: name("Category")})
	if err != nil {
		f.t.Fatalf("create category: %v", err)
	}
	return c
}

// Price is a price to give a pet, so that it can be ordered.
func Price(p int64) *int64 { return &p }

// petWith creates a pet in a new category with the given status, then sets its stock
// (which may change the status under the domain's SetStock when stock > 0).
func (f *fixture) petWith(status petstore.PetStatus, stock int) petstore.Pet {
	f.t.Helper()
	c := f.category()
	p, err := f.s.CreatePet(f.ctx, petstore.PetFields{Name: name("Pet"), CategoryID: c.ID, Status: status, Price: Price(1999)})
	if err != nil {
		f.t.Fatalf("create pet: %v", err)
	}
	if stock > 0 {
		if _, err := f.s.SetInventory(f.ctx, p.ID, stock); err != nil {
			f.t.Fatalf("set inventory: %v", err)
		}
	}
	return f.pet(p.ID)
}

// availablePet creates an available pet with the given stock.
func (f *fixture) availablePet(stock int) petstore.Pet {
	f.t.Helper()
	return f.petWith(petstore.Available, stock)
}

// pet reads a pet back.
func (f *fixture) pet(id int64) petstore.Pet {
	f.t.Helper()
	p, err := f.s.Pet(f.ctx, id)
	if err != nil {
		f.t.Fatalf("pet %d: %v", id, err)
	}
	return p
}

func (f *fixture) order(account, pet int64, quantity int) petstore.Order {
	f.t.Helper()
	o, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: account, PetID: pet, Quantity: quantity})
	if err != nil {
		f.t.Fatalf("place order of %d: %v", quantity, err)
	}
	if o.Replayed {
		f.t.Fatalf("an order without a key was replayed: %+v", o)
	}
	return o.Order
}

func (f *fixture) complete(id int64) petstore.Order {
	f.t.Helper()
	yes := true
	o, err := f.s.UpdateOrder(f.ctx, id, petstore.OrderUpdate{Complete: &yes})
	if err != nil {
		f.t.Fatalf("complete order %d: %v", id, err)
	}
	return o
}

// wantPet checks a pet's status and stock.
func (f *fixture) wantPet(id int64, status petstore.PetStatus, stock int) {
	f.t.Helper()
	p := f.pet(id)
	if p.Status != status || p.Stock != stock {
		f.t.Errorf("pet %d is %s with stock %d, want %s with stock %d", id, p.Status, p.Stock, status, stock)
	}
}

// wantCode fails the test unless err carries the code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	if got := petstore.ErrorCode(err); got != code {
		t.Fatalf("got error %q with code %s, want %s", err, got, code)
	}
}

// wantField fails the test unless err is a validation error about field.
func wantField(t *testing.T, err error, field string) {
	t.Helper()
	wantCode(t, err, petstore.EValidationFailed)
	var e *petstore.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *petstore.Error", err)
	}
	for _, d := range e.Details {
		if d.Field == field {
			return
		}
	}
	t.Fatalf("error %q has no detail on %s (details %+v)", err, field, e.Details)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantRecent checks that a time read from the store is in UTC and close to now.
func wantRecent(t *testing.T, what string, got time.Time) {
	t.Helper()
	if got.Location() != time.UTC {
		t.Errorf("%s is in %v, want UTC", what, got.Location())
	}
	if d := time.Since(got); d < -time.Minute || d > time.Minute {
		t.Errorf("%s = %v, want about now", what, got)
	}
}

// ids returns the ids of a list, for comparing pages.
func ids[T any](list []T, id func(T) int64) []int64 {
	out := make([]int64, len(list))
	for i, v := range list {
		out[i] = id(v)
	}
	return out
}

func petID(p petstore.Pet) int64              { return p.ID }
func categoryID(c petstore.Category) int64    { return c.ID }
func orderID(o petstore.Order) int64          { return o.ID }
func itemID(i petstore.InventoryItem) int64   { return i.PetID }
func keyID(k petstore.APIKey) int64           { return k.ID }
func ptr[T any](v T) *T                       { return &v }
func sameIDs(a, b []int64) bool               { return fmt.Sprint(a) == fmt.Sprint(b) }
func microsecond(t time.Time) time.Time       { return t.Truncate(time.Microsecond) }
func inZone(t time.Time, hours int) time.Time { return t.In(time.FixedZone("", hours*3600)) }
