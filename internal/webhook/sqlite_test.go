package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
	"github.com/acme-pets/petstore/internal/webhook"
)

// TestDispatcherOnSQLite: orders placed on the real SQLite store reach a real receiver
// as order.placed, signed, one per order (in no fixed order: several are in flight at
// once). The store's commit hook is the only thing that wakes the dispatcher (its poll
// is an hour), as it is in the service.
func TestDispatcherOnSQLite(t *testing.T) {
	ctx := context.Background()
	var nudge func()
	db, err := sqlite.OpenWith(ctx, filepath.Join(t.TempDir(), "petstore.db"), sqlite.Options{
		WakeDispatcher: func() { nudge() },
	})
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })

	type body struct {
		ID      string
		Type    petstore.EventType
		Seq     int64
		OrderID int64
	}
	var (
		mu     sync.Mutex
		bodies []body
	)
	rc := newReceiver(t, secret, time.Now, func(_ int, w http.ResponseWriter, r *http.Request) {
		// The receiver's checks of the signature and id are newReceiver's; this
		// keeps what it was sent.
		w.WriteHeader(http.StatusNoContent)
	})
	encode := func(e petstore.Event) ([]byte, error) {
		b := body{ID: e.ID, Type: e.Type, Seq: e.Seq}
		if e.Order != nil {
			b.OrderID = e.Order.ID
		}
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		return json.Marshal(b)
	}
	wh, err := db.CreateWebhook(ctx, petstore.Webhook{URL: rc.URL + "/hooks", Events: petstore.OrderPlaced.Bit(), Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: db, Sender: webhook.NewSender(webhook.SenderOptions{Timeout: 10 * time.Second, AllowPrivate: true}),
		Encode: encode, Poll: time.Hour,
	})
	nudge = d.Nudge
	run(t, d)

	acct, err := db.CreateAccount(ctx, "buyer@example.com", "", petstore.Customer)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := db.CreateCategory(ctx, petstore.Category{Name: "Dogs"})
	if err != nil {
		t.Fatal(err)
	}
	price := int64(1999)
	pet, err := db.CreatePet(ctx, petstore.PetFields{Name: "Rex", CategoryID: cat.ID, Status: petstore.Available, Price: &price})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetInventory(ctx, pet.ID, 100); err != nil {
		t.Fatal(err)
	}
	// Concurrent orders, so that some share a batch (one transaction, several events).
	const orders = 12
	placed := make([]int64, orders)
	var wg sync.WaitGroup
	for i := range orders {
		wg.Go(func() {
			o, err := db.PlaceOrder(ctx, petstore.NewOrder{AccountID: acct.ID, PetID: pet.ID, Quantity: 1})
			if err != nil {
				t.Error(err)
				return
			}
			placed[i] = o.Order.ID
		})
	}
	wg.Wait()

	// Every event is fanned out by a claim; the last attempt is recorded just after
	// the receiver answers it.
	waitFor(t, "every order.placed delivered", func() bool {
		st, err := db.QueueStats(ctx)
		return err == nil && st.Pending == 0
	})
	got, forged := rc.requests()
	gotSet := map[string]bool{}
	for _, id := range got {
		gotSet[id] = true
	}
	if len(forged) > 0 {
		t.Errorf("signatures that do not verify: %q", forged)
	}
	mu.Lock()
	sent := slices.Clone(bodies)
	mu.Unlock()
	var ids, delivered []int64
	for i, b := range sent {
		if b.Type != petstore.OrderPlaced || !gotSet[b.ID] {
			t.Errorf("delivery %d: %+v, which the receiver did not see", i, b)
		}
		delivered = append(delivered, b.OrderID)
	}
	ids = slices.Clone(placed)
	slices.Sort(ids)
	slices.Sort(delivered)
	if !slices.Equal(ids, delivered) || len(got) != orders {
		t.Errorf("the receiver got %d deliveries of orders %v, want one of each of %v", len(got), delivered, ids)
	}
	list, err := db.Deliveries(ctx, wh.ID, petstore.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	// Each succeeded at once: the store kept the fact, not a record of the attempt.
	for _, dl := range list {
		if dl.Status != petstore.DeliverySucceeded || dl.Attempts != 1 || dl.LastAttemptAt != nil {
			t.Errorf("delivery %d: %s after %d attempts, last at %v", dl.ID, dl.Status, dl.Attempts, dl.LastAttemptAt)
		}
	}
	if len(list) != orders {
		t.Errorf("%d deliveries stored, want %d", len(list), orders)
	}
}
