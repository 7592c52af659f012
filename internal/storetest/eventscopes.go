package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// What the stores do for keys limited to some event types (petstore.EventType.Scope):
// the feed of some types (EventFilter.Types), the types of an endpoint's pending
// deliveries (UpdateWebhook's pending), and a retry refused by the caller's check.

func testScopedEvents(t *testing.T, open Opener) {
	t.Run("the feed of some types lists exactly their events, by Seq, page by page", func(t *testing.T) { testScopedFeed(t, open) })
	t.Run("UpdateWebhook's change reads the types of the endpoint's pending deliveries", func(t *testing.T) { testScopedWebhookUpdate(t, open) })
	t.Run("a retry the caller's check refuses changes nothing, and the check sees the event's type", func(t *testing.T) { testScopedRetry(t, open) })
}

func testScopedFeed(t *testing.T, open Opener) {
	f := setup(t, open)
	fd := f.feed()
	all := everyKindOfEvent(f, fd)
	subsets := [][]petstore.EventType{
		{placed},
		{keyCreated},
		{placed, keyCreated},
		{keyCreated, completed, cancelled, placed}, // the order given does not matter
		{invUpd, restocked, soldOut, statusChg},
		{placed, completed, cancelled, invUpd, restocked, soldOut, statusChg, keyRevoked}, // all but one
	}
	for _, types := range subsets {
		var want []petstore.Event
		for _, e := range all {
			if slices.Contains(types, e.Type) {
				want = append(want, e)
			}
		}
		filter := petstore.EventFilter{Types: types}
		for _, limit := range []int{1, 2, 3, petstore.MaxLimit} {
			if got := fd.read(0, filter, limit); !sameEvents(got, want) {
				t.Errorf("%v by pages of %d: %v, want %v", types, limit, seqs(got), seqs(want))
			}
		}
		mid := all[len(all)/2].Seq
		var rest []petstore.Event
		for _, e := range want {
			if e.Seq > mid {
				rest = append(rest, e)
			}
		}
		if got := fd.read(mid, filter, 2); !sameEvents(got, rest) {
			t.Errorf("%v after Seq %d: %v, want %v", types, mid, seqs(got), seqs(rest))
		}
	}
	if got := fd.read(0, petstore.EventFilter{Types: []petstore.EventType{}}, petstore.MaxLimit); len(got) != 0 {
		t.Errorf("the feed of no type lists %v", seqs(got))
	}
	if got := fd.read(0, petstore.EventFilter{}, 3); !sameEvents(got, all) {
		t.Errorf("the unfiltered feed is %v, want %v", seqs(got), seqs(all))
	}
}

func testScopedWebhookUpdate(t *testing.T, open Opener) {
	f := setup(t, open)
	ws := f.webhookStore()
	w := f.hook(petstore.MaskAll)
	a := f.account(petstore.Customer)
	_, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_k", Hash: []byte("k")})
	must(t, err)
	p := f.availablePet(1)
	ev := f.feed().next(keyCreated, invUpd, restocked)
	pendingOf := func() []petstore.EventType {
		t.Helper()
		var got []petstore.EventType
		_, err := ws.UpdateWebhook(f.ctx, w.ID, func(cur petstore.Webhook, pending petstore.PendingTypes) (petstore.Webhook, error) {
			var err error
			got, err = pending()
			return cur, err
		})
		must(t, err)
		slices.Sort(got)
		return got
	}
	if got := pendingOf(); len(got) != 0 {
		t.Errorf("before any claim, pending = %v", got)
	}
	t1 := epoch()
	f.fanOut(t1, keys(w.ID, seqs(ev)...)...)
	if got, want := pendingOf(), []petstore.EventType{keyCreated, invUpd, restocked}; !slices.Equal(got, sorted(want)) {
		t.Errorf("with every delivery in flight, pending = %v, want %v", got, sorted(want))
	}
	f.finish(succeeded(w.ID, ev[0].Seq, t1), succeeded(w.ID, ev[1].Seq, t1), retryAt(w.ID, ev[2].Seq, t1, t1.Add(time.Hour)))
	if got := pendingOf(); !slices.Equal(got, []petstore.EventType{restocked}) {
		t.Errorf("with one retry due, pending = %v, want [pet.restocked]", got)
	}
	_, err = f.s.SetInventory(f.ctx, p.ID, 0) // written after the claim: not pending yet
	must(t, err)
	if got := pendingOf(); !slices.Equal(got, []petstore.EventType{restocked}) {
		t.Errorf("with events not yet claimed, pending = %v, want [pet.restocked]", got)
	}
	_, err = ws.UpdateWebhook(f.ctx, w.ID, func(cur petstore.Webhook, pending petstore.PendingTypes) (petstore.Webhook, error) {
		cur.URL = "https://example.com/elsewhere"
		return cur, errors.New("refused")
	})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("UpdateWebhook = %v, want change's refusal", err)
	}
	if got, _ := ws.Webhook(f.ctx, w.ID); got.URL != w.URL {
		t.Errorf("a refused change moved the endpoint to %s", got.URL)
	}
}

func testScopedRetry(t *testing.T, open Opener) {
	f := setup(t, open)
	ws := f.webhookStore()
	w := f.hook(petstore.MaskAll)
	f.availablePet(1)
	ev := f.feed().next(invUpd, restocked)
	failed, done := ev[1].Seq, ev[0].Seq
	t1 := epoch()
	f.fanOut(t1, keys(w.ID, done, failed)...)
	f.finish(succeeded(w.ID, done, t1),
		petstore.AttemptResult{WebhookID: w.ID, DeliveryID: failed, At: t1, Status: petstore.DeliveryFailed, ResponseStatus: 500, Error: "no"})
	refusal := petstore.LacksEventScope("pets:read", restocked)
	for _, id := range []int64{failed, done} { // a row, and one only a span tells of
		before := f.delivery(w.ID, id)
		var seen petstore.Delivery
		_, err := ws.RetryDelivery(f.ctx, w.ID, id, t1.Add(time.Hour), func(d petstore.Delivery) error { seen = d; return refusal })
		if !errors.Is(err, refusal) {
			t.Errorf("retry of %d: %v, want the check's refusal", id, err)
		}
		if seen.ID != id || seen.EventType != before.EventType || seen.EventID != before.EventID {
			t.Errorf("the check saw %+v, want delivery %d of %s", seen, id, before.EventType)
		}
		if after := f.delivery(w.ID, id); after.Status != before.Status || !sameTime(after.NextAttemptAt, before.NextAttemptAt) {
			t.Errorf("a refused retry left delivery %d %+v, was %+v", id, after, before)
		}
	}
	if jobs := f.claim(t1.Add(2*time.Hour), 10); len(jobs) != 0 {
		t.Errorf("after refused retries, a claim took %v", claimed(jobs))
	}
}

// everyKindOfEvent writes events of every type of the feed, several of the common
// ones between the rare ones, and returns the feed.
func everyKindOfEvent(f *fixture, fd *feed) []petstore.Event {
	f.t.Helper()
	a := f.account(petstore.Customer)
	p := f.availablePet(3)
	var all []petstore.Event
	all = append(all, fd.next(invUpd, restocked)...)
	k, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_k", Hash: []byte("k")})
	must(f.t, err)
	all = append(all, fd.next(keyCreated)...)
	o1, o2 := f.order(a.ID, p.ID, 1), f.order(a.ID, p.ID, 1)
	all = append(all, fd.next(placed, invUpd, placed, invUpd)...)
	must(f.t, f.s.CancelOrder(f.ctx, o1.ID, a.ID))
	all = append(all, fd.next(cancelled, invUpd)...)
	last := f.order(a.ID, p.ID, 2)
	all = append(all, fd.next(placed, invUpd, soldOut, statusChg)...)
	f.complete(o2.ID)
	all = append(all, fd.next(completed)...)
	f.complete(last.ID)
	all = append(all, fd.next(completed, statusChg)...)
	must(f.t, f.s.RevokeAPIKey(f.ctx, a.ID, k.ID, petstore.Actor{AccountID: a.ID}))
	all = append(all, fd.next(keyRevoked)...)
	return all
}

func sorted(types []petstore.EventType) []petstore.EventType {
	return slices.Sorted(slices.Values(types))
}
