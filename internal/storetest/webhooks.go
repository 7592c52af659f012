package storetest

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Webhook endpoints and the deliveries every event makes to them. The dispatcher's
// side of the store is in deliveries.go.

func testWebhooks(t *testing.T, open Opener) {
	t.Run("an endpoint is created enabled, read back and listed by pages", func(t *testing.T) { testWebhookCreated(t, open) })
	t.Run("the store keeps at most MaxWebhooks endpoints", func(t *testing.T) { testWebhookCap(t, open) })
	t.Run("an endpoint's URL and description follow the text policy, whoever sets them", func(t *testing.T) { testWebhookTextPolicy(t, open) })
	t.Run("an endpoint changes to what change returns; an error from change changes nothing", func(t *testing.T) { testWebhookUpdated(t, open) })
	t.Run("a claim fans an event out to each enabled endpoint subscribed to its type, and to none made after it", func(t *testing.T) { testWebhookFanOut(t, open) })
	t.Run("a delivery that succeeds at its first attempt is listed as succeeded once; one that needed more keeps its record", func(t *testing.T) { testWebhookDeliveryRecord(t, open) })
	t.Run("a new subscription applies to the events not yet sent", func(t *testing.T) { testWebhookResubscribed(t, open) })
	t.Run("disabling an endpoint fails its pending deliveries and the events not yet sent, and stops new ones", func(t *testing.T) { testWebhookDisabled(t, open) })
	t.Run("deleting an endpoint removes it and its deliveries", func(t *testing.T) { testWebhookDeleted(t, open) })
	t.Run("a test event goes to its endpoint only, due at once, and stays out of the feed", func(t *testing.T) { testWebhookTestEvent(t, open) })
}

func testWebhookCreated(t *testing.T, open Opener) {
	f, _ := clocked(t, open)
	ws := f.webhookStore()
	var made []petstore.Webhook
	for range 3 {
		w := f.hook(petstore.OrderPlaced.Bit() | petstore.PetSoldOut.Bit())
		if w.ID == 0 || !w.Enabled || w.DisabledReason != "" || w.FailingSince != nil {
			t.Errorf("created %s", describeWebhook(w))
		}
		if !w.CreatedAt.Equal(epoch()) || !w.UpdatedAt.Equal(epoch()) {
			t.Errorf("created at %v, updated at %v; want the store's clock, %v", w.CreatedAt, w.UpdatedAt, epoch())
		}
		got, err := ws.Webhook(f.ctx, w.ID)
		must(t, err)
		wantWebhook(t, got, w)
		made = append(made, w)
	}
	first, err := ws.Webhooks(f.ctx, petstore.Page{Limit: 2})
	must(t, err)
	rest, err := ws.Webhooks(f.ctx, petstore.Page{Limit: 2, After: first[len(first)-1].ID})
	must(t, err)
	all := append(first, rest...)
	if got, want := ids(all, func(w petstore.Webhook) int64 { return w.ID }), ids(made, func(w petstore.Webhook) int64 { return w.ID }); !sameIDs(got, want) {
		t.Fatalf("listed %v by pages of 2, want %v", got, want)
	}
	for i := range all {
		wantWebhook(t, all[i], made[i])
	}
	_, err = ws.Webhook(f.ctx, 999999)
	wantCode(t, err, petstore.ENotFound)
}

func testWebhookCap(t *testing.T, open Opener) {
	f := setup(t, open)
	ws := f.webhookStore()
	var last petstore.Webhook
	for range petstore.MaxWebhooks {
		last = f.hook(petstore.MaskAll)
	}
	_, err := ws.CreateWebhook(f.ctx, petstore.Webhook{URL: "https://example.com/one-too-many", Events: petstore.MaskAll, Secret: "whsec_x"})
	wantCode(t, err, petstore.EConflict)
	must(t, ws.DeleteWebhook(f.ctx, last.ID))
	f.hook(petstore.MaskAll)
}

func testWebhookTextPolicy(t *testing.T, open Opener) {
	f := setup(t, open)
	ws := f.webhookStore()
	for _, w := range []petstore.Webhook{
		{URL: "https://example.com/\u202e/x"},
		{URL: "https://example.com/\nlevel=ERROR"},
		{URL: "https://example.com/x\x00"},
		{URL: "https://example.com/x", Description: "a\u202eb\nlevel=ERROR msg=fake\u001b[31m"},
	} {
		w.Events, w.Secret = petstore.MaskAll, "whsec_x"
		_, err := ws.CreateWebhook(f.ctx, w)
		wantCode(t, err, petstore.EValidationFailed)
	}
	if list, err := ws.Webhooks(f.ctx, petstore.Page{Limit: 10}); err != nil || len(list) != 0 {
		t.Fatalf("refused endpoints were stored: %v, %v", list, err)
	}
	w := f.hook(petstore.MaskAll)
	for _, change := range []func(*petstore.Webhook){
		func(w *petstore.Webhook) { w.URL = "https://example.com/\x1b[31m" },
		func(w *petstore.Webhook) { w.Description = "a\u0085b" },
	} {
		_, err := ws.UpdateWebhook(f.ctx, w.ID, func(cur petstore.Webhook, _ petstore.PendingTypes) (petstore.Webhook, error) {
			change(&cur)
			return cur, nil
		})
		wantCode(t, err, petstore.EValidationFailed)
	}
	read, err := ws.Webhook(f.ctx, w.ID)
	must(t, err)
	wantWebhook(t, read, w)
}

func testWebhookUpdated(t *testing.T, open Opener) {
	f, c := clocked(t, open)
	ws := f.webhookStore()
	w := f.hook(petstore.MaskAll)
	later := epoch().Add(time.Hour)
	c.Set(later)
	expires := later.Add(24 * time.Hour)
	got, err := ws.UpdateWebhook(f.ctx, w.ID, func(cur petstore.Webhook, _ petstore.PendingTypes) (petstore.Webhook, error) {
		wantWebhook(t, cur, w)
		cur.URL, cur.Description, cur.Events = "https://example.org/new", "new", petstore.OrderCancelled.Bit()
		cur.PreviousSecret, cur.PreviousSecretExpiresAt, cur.Secret = cur.Secret, &expires, "whsec_rotated"
		return cur, nil
	})
	must(t, err)
	want := w
	want.URL, want.Description, want.Events = "https://example.org/new", "new", petstore.OrderCancelled.Bit()
	want.PreviousSecret, want.PreviousSecretExpiresAt, want.Secret = w.Secret, &expires, "whsec_rotated"
	want.UpdatedAt = later
	wantWebhook(t, got, want)
	read, err := ws.Webhook(f.ctx, w.ID)
	must(t, err)
	wantWebhook(t, read, want)

	refusal := errors.New("no")
	c.Set(later.Add(time.Hour))
	_, err = ws.UpdateWebhook(f.ctx, w.ID, func(cur petstore.Webhook, _ petstore.PendingTypes) (petstore.Webhook, error) {
		cur.URL, cur.Enabled = "https://example.net/", false
		return cur, refusal
	})
	if !errors.Is(err, refusal) {
		t.Errorf("UpdateWebhook = %v, want change's error", err)
	}
	read, err = ws.Webhook(f.ctx, w.ID)
	must(t, err)
	wantWebhook(t, read, want)

	_, err = ws.UpdateWebhook(f.ctx, 999999, func(cur petstore.Webhook, _ petstore.PendingTypes) (petstore.Webhook, error) { return cur, nil })
	wantCode(t, err, petstore.ENotFound)
}

func testWebhookFanOut(t *testing.T, open Opener) {
	f, c := clocked(t, open)
	every := f.hook(petstore.MaskAll)
	orders := f.hook(petstore.OrderPlaced.Bit() | petstore.OrderCancelled.Bit())
	soldOut := f.hook(petstore.PetSoldOut.Bit())
	off := f.hook(petstore.MaskAll)
	f.disable(off.ID)
	a := f.account(petstore.Customer)
	p := f.availablePet(5) // inventory.updated, pet.restocked at epoch
	at := epoch().Add(time.Minute)
	c.Set(at)
	o := f.order(a.ID, p.ID, 1) // order.placed, inventory.updated
	late := f.hook(petstore.MaskAll)
	events := f.feed().next(invUpd, restocked, placed, invUpd)
	if got := events[2].Order; got == nil || got.ID != o.ID {
		t.Errorf("event 2 holds %+v, want order %d", got, o.ID)
	}
	// Nothing is written per endpoint with the events: they are listed once a
	// claim has fanned them out.
	for _, w := range []petstore.Webhook{every, orders, soldOut, off, late} {
		if got := f.deliveries(w.ID); len(got) != 0 {
			t.Errorf("endpoint %d lists %+v before any claim", w.ID, got)
		}
	}
	now := at.Add(time.Second)
	f.fanOut(now, append(keys(every.ID, events[0].Seq, events[1].Seq, events[2].Seq, events[3].Seq), keys(orders.ID, events[2].Seq)...)...)
	tests := []struct {
		name   string
		hook   petstore.Webhook
		events []petstore.Event
	}{
		{"every type", every, events},
		{"order types", orders, events[2:3]},
		{"another type", soldOut, nil},
		{"disabled", off, nil},
		{"made after the events", late, nil},
	}
	for _, tt := range tests {
		got := f.deliveries(tt.hook.ID)
		if len(got) != len(tt.events) {
			t.Errorf("%s: %d deliveries, want %d: %+v", tt.name, len(got), len(tt.events), got)
			continue
		}
		for i, d := range got {
			e := tt.events[i]
			if d.ID != e.Seq || d.WebhookID != tt.hook.ID || d.EventID != e.ID || d.EventType != e.Type || d.Status != petstore.DeliveryPending ||
				d.Attempts != 0 || !sameTime(d.NextAttemptAt, &now) || d.LastAttemptAt != nil ||
				d.ResponseStatus != 0 || d.LastError != "" || !d.CreatedAt.Equal(e.CreatedAt) {
				t.Errorf("%s: delivery %d is %+v, want a pending delivery of event %s (%s) with its Seq as id, due at %v", tt.name, i, d, e.ID, e.Type, now)
			}
		}
	}
	_, err := f.webhookStore().Deliveries(f.ctx, 999999, petstore.Page{})
	wantCode(t, err, petstore.ENotFound)
}

func testWebhookDeliveryRecord(t *testing.T, open Opener) {
	f, c := clocked(t, open)
	w := f.hook(petstore.InventoryUpdated.Bit())
	p := f.availablePet(1)
	c.Set(epoch().Add(time.Minute))
	f.restock(p.ID)
	ev := f.feed().next(invUpd, restocked, invUpd)
	t1 := epoch().Add(time.Hour)
	f.fanOut(t1, keys(w.ID, ev[0].Seq, ev[2].Seq)...)
	f.finish(succeeded(w.ID, ev[0].Seq, t1), retryAt(w.ID, ev[2].Seq, t1, t1.Add(time.Minute)))
	t2 := t1.Add(time.Minute)
	f.fanOut(t2, keys(w.ID, ev[2].Seq)...)
	f.finish(succeeded(w.ID, ev[2].Seq, t2))
	got := f.deliveries(w.ID)
	if len(got) != 2 {
		t.Fatalf("%d deliveries, want 2: %+v", len(got), got)
	}
	if d := got[0]; d.ID != ev[0].Seq || d.EventID != ev[0].ID || d.EventType != invUpd || d.Status != petstore.DeliverySucceeded ||
		d.Attempts != 1 || d.NextAttemptAt != nil || d.LastError != "" || !d.CreatedAt.Equal(ev[0].CreatedAt) {
		t.Errorf("the delivery that succeeded at once is %+v, want succeeded after 1 attempt", d)
	}
	if d := got[1]; d.ID != ev[2].Seq || d.Status != petstore.DeliverySucceeded || d.Attempts != 2 || !sameTime(d.LastAttemptAt, &t2) ||
		d.ResponseStatus != 200 {
		t.Errorf("the delivery that succeeded at its second attempt is %+v, want its record", d)
	}
	if jobs := f.claim(t2.Add(time.Hour), 10); len(jobs) != 0 {
		t.Errorf("claimed %v after every delivery succeeded", claimed(jobs))
	}
}

func testWebhookResubscribed(t *testing.T, open Opener) {
	f, _ := clocked(t, open)
	ws := f.webhookStore()
	w := f.hook(petstore.InventoryUpdated.Bit())
	p := f.availablePet(1) // inventory.updated, pet.restocked
	ev := f.feed().next(invUpd, restocked)
	t1 := epoch().Add(time.Hour)
	f.fanOut(t1, keys(w.ID, ev[0].Seq)...)
	f.finish(succeeded(w.ID, ev[0].Seq, t1))
	_, err := ws.UpdateWebhook(f.ctx, w.ID, func(w petstore.Webhook, _ petstore.PendingTypes) (petstore.Webhook, error) {
		w.Events = petstore.PetSoldOut.Bit()
		return w, nil
	})
	must(t, err)
	_, err = f.s.SetInventory(f.ctx, p.ID, 0) // inventory.updated, pet.sold_out, pet.status_changed
	must(t, err)
	more := f.feed()
	more.last = ev[1].Seq
	later := more.next(invUpd, petstore.PetSoldOut, petstore.PetStatusChanged)
	f.fanOut(t1, keys(w.ID, later[1].Seq)...)
	if got := deliveryIDs(f.deliveries(w.ID)); !sameIDs(got, []int64{ev[0].Seq, later[1].Seq}) {
		t.Errorf("the endpoint lists deliveries %v, want %v: inventory.updated under the old subscription, pet.sold_out under the new",
			got, []int64{ev[0].Seq, later[1].Seq})
	}
}

func testWebhookDisabled(t *testing.T, open Opener) {
	f := setup(t, open)
	w := f.hook(petstore.InventoryUpdated.Bit())
	p := f.availablePet(1)
	f.restock(p.ID)
	fd := f.feed()
	ev := fd.next(invUpd, restocked, invUpd)
	now := epoch().Add(time.Hour)
	// A window of 1: the first is sent, the second not yet.
	jobs := f.claimWith(petstore.ClaimOptions{Now: now, Max: 10, Window: 1})
	if got := claimed(jobs); !slices.Equal(got, keys(w.ID, ev[0].Seq)) {
		t.Fatalf("claimed %v with a window of 1, want %v", got, keys(w.ID, ev[0].Seq))
	}
	if got := f.disable(w.ID); got.Enabled || got.DisabledReason != "" {
		t.Errorf("disabled by an admin: %s, want disabled without a reason", describeWebhook(got))
	}
	f.restock(p.ID)
	late := fd.next(invUpd)
	got := f.deliveries(w.ID)
	if !sameIDs(deliveryIDs(got), []int64{ev[0].Seq, ev[2].Seq}) {
		t.Fatalf("deliveries %v after disabling, want %v (not %d, written after)", deliveryIDs(got), []int64{ev[0].Seq, ev[2].Seq}, late[0].Seq)
	}
	for _, d := range got {
		if d.Status != petstore.DeliveryFailed || d.NextAttemptAt != nil || d.LastError != petstore.DisabledByAdmin {
			t.Errorf("delivery %d is %s (next %v, %q), want failed by the disabling", d.ID, d.Status, d.NextAttemptAt, d.LastError)
		}
	}
	if jobs := f.claim(now.Add(time.Hour), 10); len(jobs) != 0 {
		t.Errorf("claimed %v of a disabled endpoint", claimed(jobs))
	}
	// Enabled again, it is sent what happens from then on.
	_, err := f.webhookStore().UpdateWebhook(f.ctx, w.ID, func(w petstore.Webhook, _ petstore.PendingTypes) (petstore.Webhook, error) {
		w.Enabled = true
		return w, nil
	})
	must(t, err)
	f.restock(p.ID)
	after := fd.next(invUpd)
	f.fanOut(now, keys(w.ID, after[0].Seq)...)
}

func testWebhookDeleted(t *testing.T, open Opener) {
	f := setup(t, open)
	ws := f.webhookStore()
	gone, kept := f.hook(petstore.MaskAll), f.hook(petstore.MaskAll)
	f.availablePet(3)
	ev := f.feed().next(invUpd, restocked)
	now := epoch().Add(time.Hour)
	f.fanOut(now, append(keys(gone.ID, ev[0].Seq, ev[1].Seq), keys(kept.ID, ev[0].Seq, ev[1].Seq)...)...)
	must(t, ws.DeleteWebhook(f.ctx, gone.ID))
	_, err := ws.Webhook(f.ctx, gone.ID)
	wantCode(t, err, petstore.ENotFound)
	_, err = ws.Deliveries(f.ctx, gone.ID, petstore.Page{})
	wantCode(t, err, petstore.ENotFound)
	wantCode(t, ws.DeleteWebhook(f.ctx, gone.ID), petstore.ENotFound)
	// A result of an endpoint deleted meanwhile is left out.
	f.finish(succeeded(gone.ID, ev[0].Seq, now), succeeded(kept.ID, ev[0].Seq, now))
	st, err := ws.QueueStats(f.ctx)
	must(t, err)
	if st.Pending != 1 {
		t.Errorf("%d pending deliveries, want the other endpoint's 1", st.Pending)
	}
	if got := f.deliveries(kept.ID); len(got) != 2 || got[0].Status != petstore.DeliverySucceeded || got[1].Status != petstore.DeliveryPending {
		t.Errorf("the other endpoint's deliveries are %+v", got)
	}
}

func testWebhookTestEvent(t *testing.T, open Opener) {
	f, _ := clocked(t, open)
	ws := f.webhookStore()
	target, other := f.hook(petstore.OrderPlaced.Bit()), f.hook(petstore.MaskAll)
	now := epoch().Add(3 * time.Hour)
	d, err := ws.SendTestEvent(f.ctx, target.ID, now)
	must(t, err)
	if d.ID == 0 || d.WebhookID != target.ID || d.EventType != petstore.WebhookTest || d.Status != petstore.DeliveryPending ||
		!sameTime(d.NextAttemptAt, &now) || d.Attempts != 0 {
		t.Errorf("SendTestEvent = %+v, want a pending webhook.test delivery due at %v", d, now)
	}
	if got := f.deliveries(target.ID); len(got) != 1 || got[0].ID != d.ID || got[0].EventID != d.EventID {
		t.Errorf("the endpoint's deliveries are %+v, want only %+v", got, d)
	}
	_, err = ws.Event(f.ctx, d.EventID)
	wantCode(t, err, petstore.ENotFound)
	jobs := f.claim(now, 10)
	if got := claimed(jobs); !slices.Equal(got, keys(target.ID, d.ID)) {
		t.Fatalf("claimed %v at %v, want only the test delivery %v", got, now, keys(target.ID, d.ID))
	}
	job := jobs[0]
	if e := job.Event; e.ID != d.EventID || e.Type != petstore.WebhookTest || e.Webhook == nil || e.Webhook.ID != target.ID ||
		e.Webhook.URL != target.URL || e.Webhook.Secret != "" {
		t.Errorf("the test event is %+v, want webhook.test holding its endpoint (without secrets)", e)
	}
	if job.Webhook.ID != target.ID || job.Webhook.Secret != target.Secret {
		t.Errorf("the job goes to %s, want %s", describeWebhook(job.Webhook), describeWebhook(target))
	}
	if got := f.deliveries(other.ID); len(got) != 0 {
		t.Errorf("another endpoint got %+v", got)
	}
	f.feed().nothing() // with the marker's event for other (MaskAll), not the test's
	_, err = ws.SendTestEvent(f.ctx, 999999, now)
	wantCode(t, err, petstore.ENotFound)

	// A test delivery that succeeds keeps its record: no span tells of it.
	f.finish(succeeded(target.ID, d.ID, now))
	if got := f.deliveries(target.ID); len(got) != 1 || got[0].Status != petstore.DeliverySucceeded || !sameTime(got[0].LastAttemptAt, &now) {
		t.Errorf("the test delivery that succeeded is %+v", got)
	}
	// At most MaxPendingTests pending at once.
	for range petstore.MaxPendingTests {
		_, err := ws.SendTestEvent(f.ctx, target.ID, now)
		must(t, err)
	}
	_, err = ws.SendTestEvent(f.ctx, target.ID, now)
	wantCode(t, err, petstore.EConflict)
}

// testChunkedPurge: a purge deletes in chunks, each in its own transaction, exactly
// the events (and Idempotency-Keys) before its time, however many chunks that takes.
func testChunkedPurge(t *testing.T, open Opener) {
	t.Run("deletes exactly what is older, however many chunks it takes", func(t *testing.T) { chunkedPurge(t, open) })
}

func chunkedPurge(t *testing.T, open Opener) {
	var (
		mu     sync.Mutex
		chunks []int64
	)
	c := &clock{now: epoch()}
	f := setupWith(t, open, Hooks{Now: c.Now, PurgeChunk: 3, Purged: func(n int64) {
		mu.Lock()
		chunks = append(chunks, n)
		mu.Unlock()
	}})
	ws := f.webhookStore()
	w := f.hook(petstore.MaskAll)
	p := f.availablePet(1) // 2 events at epoch
	for range 8 {
		f.restock(p.ID) // 8 more at epoch
	}
	t1 := epoch().Add(time.Hour)
	c.Set(t1)
	f.restock(p.ID)
	fd := f.feed()
	all := fd.next(slices.Concat([]petstore.EventType{invUpd, restocked}, slices.Repeat([]petstore.EventType{invUpd}, 9))...)
	// Some with rows (in flight), so that their deliveries go too.
	f.claim(t1, 4)
	n, err := ws.PurgeEvents(f.ctx, t1)
	must(t, err)
	if n != 10 {
		t.Errorf("purged %d events, want the 10 before %v", n, t1)
	}
	mu.Lock()
	if !slices.Equal(chunks, []int64{3, 3, 3}) {
		t.Errorf("full chunks %v, want three of 3 (then the last 1)", chunks)
	}
	mu.Unlock()
	if got := fd.read(0, petstore.EventFilter{}, petstore.MaxLimit); !sameEvents(got, all[10:]) {
		t.Errorf("the feed holds %v, want %v", seqs(got), seqs(all[10:]))
	}
	for _, d := range f.deliveries(w.ID) {
		if d.ID != all[10].Seq {
			t.Errorf("delivery %d of a purged event is still listed", d.ID)
		}
	}
}
