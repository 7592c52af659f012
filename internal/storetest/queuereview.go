package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The webhook queue's claims and finishes as a second reader of the domain plans
// (petstore.PlanClaim, PlanFinish) checked them: what each store must keep whatever
// the plan's rounds, and a success of a retry by hand.

func testQueueReview(t *testing.T, open Opener) {
	t.Run("a claim takes an endpoint's due retries before its events when another endpoint has nothing to send", func(t *testing.T) { testClaimRetriesFirst(t, open) })
	t.Run("a claim of one is full when the first endpoints in turn have nothing to send", func(t *testing.T) { testClaimPastIdleEndpoints(t, open) })
	t.Run("a delivery that failed with its endpoint's disabling, retried by hand, succeeds", func(t *testing.T) { testRetriedFailedSpanSucceeds(t, open) })
}

func testClaimRetriesFirst(t *testing.T, open Opener) {
	f, _ := clocked(t, open)
	a, idle := f.hook(petstore.MaskAll), f.hook(petstore.PetSoldOut.Bit())
	fd := f.feed()
	p := f.availablePet(1)
	ev := fd.next(invUpd, restocked)
	t1 := epoch()
	f.fanOut(t1, keys(a.ID, ev[0].Seq, ev[1].Seq)...)
	f.finish(retryAt(a.ID, ev[0].Seq, t1, t1.Add(time.Minute)), retryAt(a.ID, ev[1].Seq, t1, t1.Add(time.Minute)))
	f.restock(p.ID) // an event after both cursors, which only a subscribes to
	later := fd.next(invUpd)
	jobs := f.claim(t1.Add(time.Hour), 2)
	if got, want := claimed(jobs), keys(a.ID, ev[0].Seq, ev[1].Seq); !slices.Equal(got, want) {
		t.Errorf("claimed %v, want the two retries due, %v, before the event %d (endpoint %d has nothing)", got, want, later[0].Seq, idle.ID)
	}
}

func testClaimPastIdleEndpoints(t *testing.T, open Opener) {
	f, _ := clocked(t, open)
	var idle []int64
	for range 6 {
		idle = append(idle, f.hook(petstore.PetSoldOut.Bit()).ID)
	}
	w := f.hook(petstore.InventoryUpdated.Bit())
	fd := f.feed()
	f.availablePet(1)
	ev := fd.next(invUpd, restocked)
	// Whichever endpoint the claim serves first, idle ones (whose cursors are behind
	// the feed's end, which is all a claim knows before it asks) most likely come
	// before w: the claim must look past them.
	if got, want := claimed(f.claim(epoch(), 1)), keys(w.ID, ev[0].Seq); !slices.Equal(got, want) {
		t.Errorf("claimed %v, want %v (endpoints %v have nothing to send)", got, want, idle)
	}
}

func testRetriedFailedSpanSucceeds(t *testing.T, open Opener) {
	f, _ := clocked(t, open)
	ws := f.webhookStore()
	w := f.hook(petstore.InventoryUpdated.Bit())
	fd := f.feed()
	f.availablePet(1)
	ev := fd.next(invUpd, restocked)
	f.disable(w.ID) // fails the event not yet sent
	_, err := ws.UpdateWebhook(f.ctx, w.ID, func(w petstore.Webhook, _ petstore.PendingTypes) (petstore.Webhook, error) {
		return w.SetEnabled(true), nil
	})
	must(t, err)
	id := ev[0].Seq
	if d := f.delivery(w.ID, id); d.Status != petstore.DeliveryFailed {
		t.Fatalf("before its retry the delivery is %+v, want failed by the disabling", d)
	}
	t1 := epoch().Add(time.Hour)
	_, err = ws.RetryDelivery(f.ctx, w.ID, id, t1, anyone)
	must(t, err)
	f.fanOut(t1, keys(w.ID, id)...)
	f.finish(succeeded(w.ID, id, t1))
	if d := f.delivery(w.ID, id); d.Status != petstore.DeliverySucceeded {
		t.Errorf("after its retry succeeded the delivery is %s (%q), want succeeded", d.Status, d.LastError)
	}
}
