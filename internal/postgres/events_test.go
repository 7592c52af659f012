package postgres_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/postgres/pgtest"
	"github.com/acme-pets/petstore/internal/storetest"
)

// feedAfter lists the whole feed after Seq after.
func feedAfter(t *testing.T, db *postgres.DB, after int64) []petstore.Event {
	t.Helper()
	list, err := db.Events(context.Background(), petstore.EventFilter{}, petstore.Page{Limit: petstore.MaxLimit, After: after})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// waitFeed waits until the feed after Seq after holds n events (other tests' open
// transactions hold it back for moments) and returns them.
func waitFeed(t *testing.T, db *postgres.DB, after int64, n int) []petstore.Event {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		list := feedAfter(t, db, after)
		if len(list) >= n || time.Now().After(deadline) {
			if len(list) != n {
				t.Fatalf("the feed holds %d events, want %d", len(list), n)
			}
			return list
		}
	}
}

// An event's Seq is drawn before its transaction commits, so a transaction that began
// first may commit its event after a later one's. A reader following the cursor would
// skip the first event if the feed showed the later one before it: the feed holds
// every event back until the transactions begun before it have ended.
func TestTheFeedShowsNoEventBeforeEarlierTransactionsEnd(t *testing.T) {
	db := pgtest.Open(t, pgtest.URL(t))
	ctx := context.Background()
	_, pet := setUpPet(t, db, 5)
	before := waitFeed(t, db, 0, 2) // inventory.updated, pet.restocked
	last := before[len(before)-1].Seq

	held := petstore.Event{ID: petstore.NewEventID(), Type: petstore.InventoryUpdated, CreatedAt: time.Now(),
		Inventory: &petstore.InventoryItem{PetID: pet, Quantity: 1, Status: petstore.Available}}
	written, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() { done <- db.HoldEventsForTest(ctx, []petstore.Event{held}, written, release) }()
	<-written
	if _, err := db.SetInventory(ctx, pet, 6); err != nil { // commits inventory.updated after it
		t.Fatal(err)
	}
	// The later event is committed, but not shown while the earlier one may commit.
	time.Sleep(100 * time.Millisecond)
	if list := feedAfter(t, db, last); len(list) != 0 {
		t.Errorf("while an earlier transaction is open the feed shows %d events after the cursor", len(list))
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	list := waitFeed(t, db, last, 2)
	if list[0].ID != held.ID || list[1].Inventory == nil || list[1].Inventory.Quantity != 6 {
		t.Errorf("the feed shows %s then %+v; want the held event first, then the stock of 6", list[0].ID, list[1].Inventory)
	}
}

func TestWakeDispatcherIsCalledAfterACommitOfEventsWhileAnEndpointListens(t *testing.T) {
	var calls atomic.Int64
	db := pgtest.OpenWith(t, pgtest.URL(t), postgres.Options{WakeDispatcher: func() { calls.Add(1) }})
	ctx := context.Background()
	account, pet := setUpPet(t, db, 5)
	if n := calls.Load(); n != 0 {
		t.Fatalf("called %d times without an endpoint", n)
	}
	w, err := db.CreateWebhook(ctx, petstore.Webhook{URL: "https://example.com/h", Events: petstore.OrderPlaced.Bit(), Secret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name  string
		do    func() error
		calls int64
	}{
		// The dispatcher's claim decides which endpoint subscribes to what: any event
		// wakes it while an endpoint is enabled.
		{"an event no endpoint subscribes to", func() error { _, err := db.SetInventory(ctx, pet, 9); return err }, 1},
		{"a batch placing an order", func() error {
			_, err := db.PlaceOrder(ctx, petstore.NewOrder{AccountID: account, PetID: pet, Quantity: 1})
			return err
		}, 1},
		{"a refused order", func() error {
			_, err := db.PlaceOrder(ctx, petstore.NewOrder{AccountID: account, PetID: pet, Quantity: 99})
			if petstore.ErrorCode(err) == petstore.EInsufficientStock {
				return nil
			}
			return err
		}, 0},
		{"a test event", func() error { _, err := db.SendTestEvent(ctx, w.ID, time.Now()); return err }, 1},
		{"a retry by hand", func() error {
			ds, err := db.Deliveries(ctx, w.ID, petstore.Page{})
			if err != nil {
				return err
			}
			if err := db.FinishAttempts(ctx, []petstore.AttemptResult{{WebhookID: w.ID, DeliveryID: ds[0].ID, At: time.Now(), Status: petstore.DeliveryFailed}}); err != nil {
				return err
			}
			_, err = db.RetryDelivery(ctx, w.ID, ds[0].ID, time.Now(), func(petstore.Delivery) error { return nil })
			return err
		}, 1},
	}
	for _, s := range steps {
		before := calls.Load()
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := calls.Load() - before; got != s.calls {
			t.Errorf("%s: WakeDispatcher was called %d times, want %d", s.name, got, s.calls)
		}
	}
}

// BenchmarkPlaceOrderWithWebhooks is BenchmarkPlaceOrder with three endpoints
// subscribed to every event: a batch writes its events and nothing per endpoint, so
// it should cost what BenchmarkPlaceOrder does.
func BenchmarkPlaceOrderWithWebhooks(b *testing.B) {
	url := pgtest.URL(b)
	storetest.BenchPlacement(b, func(b *testing.B) petstore.Store {
		db := pgtest.Open(b, url)
		for range 3 {
			if _, err := db.CreateWebhook(context.Background(), petstore.Webhook{URL: "https://example.com/h", Events: petstore.MaskAll, Secret: "s"}); err != nil {
				b.Fatal(err)
			}
		}
		return db
	})
}
