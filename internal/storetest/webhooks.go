package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Webhook endpoints, the deliveries every event makes to them, and the dispatcher's
// side of the store: claims, attempts, retries by hand, the queue's stats and the
// purge of old events.

// hook creates an endpoint subscribed to mask.
func (f *fixture) hook(mask petstore.EventMask) petstore.Webhook {
	f.t.Helper()
	n := unique.Add(1)
	w, err := f.webhookStore().CreateWebhook(f.ctx, petstore.Webhook{
		URL: fmt.Sprintf("https://example.com/hooks/%d", n), Description: fmt.Sprint("endpoint ", n),
		Events: mask, Secret: fmt.Sprint("whsec_", n),
	})
	must(f.t, err)
	return w
}

// anyone may have any delivery sent again (RetryDelivery's may).
func anyone(petstore.Delivery) error { return nil }

// disable disables an endpoint through UpdateWebhook, as an admin does.
func (f *fixture) disable(id int64) petstore.Webhook {
	f.t.Helper()
	w, err := f.webhookStore().UpdateWebhook(f.ctx, id, func(w petstore.Webhook, _ petstore.PendingTypes) (petstore.Webhook, error) {
		w.Enabled = false
		return w, nil
	})
	must(f.t, err)
	return w
}

// deliveries lists all of an endpoint's deliveries, page by page.
func (f *fixture) deliveries(webhook int64) []petstore.Delivery {
	f.t.Helper()
	out := []petstore.Delivery{}
	for p := (petstore.Page{Limit: 2}); ; {
		page, err := f.webhookStore().Deliveries(f.ctx, webhook, p)
		must(f.t, err)
		out = append(out, page...)
		if len(page) < p.Limit {
			return out
		}
		p.After = page[len(page)-1].ID
	}
}

// delivery finds one of an endpoint's deliveries.
func (f *fixture) delivery(webhook, id int64) petstore.Delivery {
	f.t.Helper()
	for _, d := range f.deliveries(webhook) {
		if d.ID == id {
			return d
		}
	}
	f.t.Fatalf("endpoint %d has no delivery %d", webhook, id)
	return petstore.Delivery{}
}

// restock changes a pet's stock without crossing 0, which writes one event:
// inventory.updated.
func (f *fixture) restock(pet int64) {
	f.t.Helper()
	p := f.pet(pet)
	if p.Stock == 0 {
		f.t.Fatal("restock needs a pet in stock")
	}
	_, err := f.s.SetInventory(f.ctx, pet, p.Stock+1)
	must(f.t, err)
}

// window is the window the tests claim with unless they say otherwise.
const window = petstore.DefaultDeliveryWindow

// claimWith claims deliveries with options o (a lease of a minute and the default
// window unless o says).
func (f *fixture) claimWith(o petstore.ClaimOptions) []petstore.DeliveryJob {
	f.t.Helper()
	if o.Lease == 0 {
		o.Lease = time.Minute
	}
	if o.Window == 0 {
		o.Window = window
	}
	jobs, err := f.webhookStore().ClaimDeliveries(f.ctx, o)
	must(f.t, err)
	return jobs
}

// claim claims deliveries at now with a lease of a minute.
func (f *fixture) claim(now time.Time, max int) []petstore.DeliveryJob {
	f.t.Helper()
	return f.claimWith(petstore.ClaimOptions{Now: now, Max: max})
}

// claimed lists the keys of claimed deliveries.
func claimed(jobs []petstore.DeliveryJob) []key {
	out := make([]key, len(jobs))
	for i, j := range jobs {
		out[i] = key{j.Webhook.ID, j.Delivery.ID}
	}
	slices.SortFunc(out, func(a, b key) int {
		if a.webhook != b.webhook {
			return int(a.webhook - b.webhook)
		}
		return int(a.delivery - b.delivery)
	})
	return out
}

// key names a delivery: its endpoint and its id.
type key struct{ webhook, delivery int64 }

func keys(webhook int64, ds ...int64) []key {
	out := make([]key, len(ds))
	for i, d := range ds {
		out[i] = key{webhook, d}
	}
	return out
}

func deliveryIDs(list []petstore.Delivery) []int64 {
	return ids(list, func(d petstore.Delivery) int64 { return d.ID })
}

// finish records attempts.
func (f *fixture) finish(rs ...petstore.AttemptResult) {
	f.t.Helper()
	must(f.t, f.webhookStore().FinishAttempts(f.ctx, rs))
}

// succeeded is the result of an attempt answered 200.
func succeeded(webhook, id int64, at time.Time) petstore.AttemptResult {
	return petstore.AttemptResult{WebhookID: webhook, DeliveryID: id, At: at, Status: petstore.DeliverySucceeded, ResponseStatus: 200}
}

// retryAt is the result of an attempt answered 500, tried again at next.
func retryAt(webhook, id int64, at, next time.Time) petstore.AttemptResult {
	return petstore.AttemptResult{WebhookID: webhook, DeliveryID: id, At: at, Status: petstore.DeliveryPending, NextAttemptAt: next,
		ResponseStatus: 500, Error: "the endpoint answered 500"}
}

// fanOut claims, at now, the deliveries of the events the feed showed last (the test
// reads them first, so that PostgreSQL shows them to claims too), and checks that the
// claim took exactly want.
func (f *fixture) fanOut(now time.Time, want ...key) []petstore.DeliveryJob {
	f.t.Helper()
	jobs := f.claim(now, 100)
	slices.SortFunc(want, func(a, b key) int {
		if a.webhook != b.webhook {
			return int(a.webhook - b.webhook)
		}
		return int(a.delivery - b.delivery)
	})
	if got := claimed(jobs); !slices.Equal(got, want) {
		f.t.Fatalf("claimed %v, want %v", got, want)
	}
	return jobs
}

// sameTime compares optional times.
func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// describeWebhook shows an endpoint for comparing, times in UTC.
func describeWebhook(w petstore.Webhook) string {
	at := func(t *time.Time) string {
		if t == nil {
			return "none"
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("{id %d, url %s, %q, events %b, enabled %v, reason %q, secret %q, previous %q until %s, failing since %s, created %s, updated %s}",
		w.ID, w.URL, w.Description, w.Events, w.Enabled, w.DisabledReason, w.Secret, w.PreviousSecret,
		at(w.PreviousSecretExpiresAt), at(w.FailingSince), at(&w.CreatedAt), at(&w.UpdatedAt))
}

func wantWebhook(t *testing.T, got, want petstore.Webhook) {
	t.Helper()
	if g, w := describeWebhook(got), describeWebhook(want); g != w {
		t.Errorf("endpoint is\n\t%s\nwant\n\t%s", g, w)
	}
}

func testWebhooks(t *testing.T, open Opener) {
	t.Run("an endpoint is created enabled, read back and listed by pages", func(t *testing.T) {
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
	})

	t.Run("the store keeps at most MaxWebhooks endpoints", func(t *testing.T) {
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
	})

	t.Run("an endpoint's URL and description follow the text policy, whoever sets them", func(t *testing.T) {
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
	})

	t.Run("an endpoint changes to what change returns; an error from change changes nothing", func(t *testing.T) {
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
	})

	t.Run("a claim fans an event out to each enabled endpoint subscribed to its type, and to none made after it", func(t *testing.T) {
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
	})

	t.Run("a delivery that succeeds at its first attempt is listed as succeeded once; one that needed more keeps its record", func(t *testing.T) {
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
	})

	t.Run("a new subscription applies to the events not yet sent", func(t *testing.T) {
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
	})

	t.Run("disabling an endpoint fails its pending deliveries and the events not yet sent, and stops new ones", func(t *testing.T) {
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
	})

	t.Run("deleting an endpoint removes it and its deliveries", func(t *testing.T) {
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
	})

	t.Run("a test event goes to its endpoint only, due at once, and stays out of the feed", func(t *testing.T) {
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
	})
}

func testDeliveries(t *testing.T, open Opener) {
	t.Run("a claim takes up to an endpoint's window less what it has in flight, and each delivery once", func(t *testing.T) {
		f, c := clocked(t, open)
		w := f.hook(petstore.InventoryUpdated.Bit())
		p := f.availablePet(1) // inventory.updated, pet.restocked at epoch
		for i := range 3 {
			c.Set(epoch().Add(time.Duration(i+1) * time.Minute))
			f.restock(p.ID)
		}
		ev := f.feed().next(invUpd, restocked, invUpd, invUpd, invUpd)
		now := epoch().Add(time.Hour)
		two := petstore.ClaimOptions{Now: now, Max: 10, Window: 2}
		jobs := f.claimWith(two)
		if got := claimed(jobs); !slices.Equal(got, keys(w.ID, ev[0].Seq, ev[2].Seq)) {
			t.Fatalf("claimed %v with a window of 2, want the first two, %v", got, keys(w.ID, ev[0].Seq, ev[2].Seq))
		}
		for _, j := range jobs {
			wantWebhook(t, j.Webhook, w)
			e := ev[0]
			if j.Delivery.ID == ev[2].Seq {
				e = ev[2]
			}
			if j.Delivery.EventID != e.ID || j.Event.ID != e.ID || describeEvent(j.Event) != describeEvent(e) || j.Event.Seq != e.Seq {
				t.Errorf("the job's event is %s (%s), want %s (%s)", j.Event.ID, describeEvent(j.Event), e.ID, describeEvent(e))
			}
			if !j.RetrySince.Equal(now) || j.Delivery.Status != petstore.DeliveryPending || j.Delivery.Attempts != 0 {
				t.Errorf("the job's delivery is %+v since %v, want pending, no attempt, since %v", j.Delivery, j.RetrySince, now)
			}
		}
		if jobs := f.claimWith(two); len(jobs) != 0 {
			t.Errorf("claimed %v with the window full", claimed(jobs))
		}
		f.finish(succeeded(w.ID, ev[0].Seq, now))
		if got := claimed(f.claimWith(two)); !slices.Equal(got, keys(w.ID, ev[3].Seq)) {
			t.Errorf("claimed %v after one ended, want the next, %v", got, keys(w.ID, ev[3].Seq))
		}
	})

	t.Run("a claim shares max among the endpoints in turn", func(t *testing.T) {
		f := setup(t, open)
		var hooks []int64
		for range 5 {
			hooks = append(hooks, f.hook(petstore.MaskAll).ID)
		}
		p := f.availablePet(1)
		f.restock(p.ID)
		f.feed().next(invUpd, restocked, invUpd)
		got := claimed(f.claim(epoch().Add(time.Hour), 5))
		per := map[int64]int{}
		for _, k := range got {
			per[k.webhook]++
		}
		for _, h := range hooks {
			if per[h] != 1 {
				t.Errorf("a claim of 5 over 5 endpoints took %v, want one of each", got)
				break
			}
		}
		if n := len(f.claim(epoch().Add(time.Hour), 100)); n != 10 {
			t.Errorf("then claimed %d, want the 10 left", n)
		}
	})

	t.Run("a lease that runs out makes the delivery claimable again (a process killed mid-delivery)", func(t *testing.T) {
		f, _ := clocked(t, open)
		w := f.hook(petstore.PetRestocked.Bit())
		f.availablePet(1)
		ev := f.feed().next(invUpd, restocked)
		now := epoch()
		lease := 30 * time.Second
		want := keys(w.ID, ev[1].Seq)
		if got := claimed(f.claimWith(petstore.ClaimOptions{Now: now, Lease: lease, Max: 10})); !slices.Equal(got, want) {
			t.Fatalf("claimed %v, want %v", got, want)
		}
		if got := f.claimWith(petstore.ClaimOptions{Now: now.Add(lease - time.Second), Lease: lease, Max: 10}); len(got) != 0 {
			t.Errorf("claimed %v under a lease", claimed(got))
		}
		if got := claimed(f.claimWith(petstore.ClaimOptions{Now: now.Add(lease + time.Second), Lease: lease, Max: 10})); !slices.Equal(got, want) {
			t.Errorf("claimed %v after the lease ran out, want %v again", got, want)
		}
	})

	t.Run("concurrent claims never share a delivery and take every one", func(t *testing.T) {
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		const endpoints, restocks, claimers = 20, 5, 8
		for range endpoints {
			f.hook(petstore.InventoryUpdated.Bit())
		}
		p := f.availablePet(1)
		for range restocks {
			f.restock(p.ID)
		}
		f.feed().next(slices.Concat([]petstore.EventType{invUpd, restocked}, slices.Repeat([]petstore.EventType{invUpd}, restocks))...)
		now := epoch()
		var (
			mu      sync.Mutex
			times   = map[key]int{}
			wg      sync.WaitGroup
			total   = endpoints * (restocks + 1)
			timeout = time.Now().Add(60 * time.Second)
		)
		for range claimers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					mu.Lock()
					finished := len(times) >= total
					mu.Unlock()
					if finished || time.Now().After(timeout) {
						return
					}
					jobs, err := ws.ClaimDeliveries(f.ctx, petstore.ClaimOptions{Now: now, Lease: time.Hour, Max: 7, Window: 3})
					if err != nil {
						t.Error(err)
						return
					}
					if len(jobs) == 0 {
						time.Sleep(time.Millisecond)
					}
					var rs []petstore.AttemptResult
					mu.Lock()
					for _, j := range jobs {
						times[key{j.Webhook.ID, j.Delivery.ID}]++
						rs = append(rs, succeeded(j.Webhook.ID, j.Delivery.ID, now))
					}
					mu.Unlock()
					if err := ws.FinishAttempts(f.ctx, rs); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if len(times) != total {
			t.Errorf("%d deliveries were claimed, want %d", len(times), total)
		}
		for k, n := range times {
			if n != 1 {
				t.Errorf("delivery %v was claimed %d times", k, n)
			}
		}
		st, err := ws.QueueStats(f.ctx)
		must(t, err)
		if st.Pending != 0 {
			t.Errorf("%d deliveries are still pending", st.Pending)
		}
	})

	t.Run("at scale every claim takes a full batch while that much is due (100 endpoints, 150,000 deliveries)", func(t *testing.T) {
		// The PostgreSQL dispatcher once claimed nothing at all with 100 endpoints and a
		// long backlog: counting what each claim takes catches it without timing.
		if testing.Short() {
			t.Skip("builds 1,501 events for 100 endpoints")
		}
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		const endpoints, max = 100, 512
		// Claims on the empty queue first, as a dispatcher polls from its start: a
		// PostgreSQL connection then caches generic plans made for empty tables,
		// which must still serve a long backlog.
		for range 8 {
			f.claim(epoch(), max)
		}
		for range endpoints {
			f.hook(petstore.MaskAll)
		}
		p := f.availablePet(1)
		var want []petstore.EventType
		for range 1499 {
			f.restock(p.ID)
			want = append(want, invUpd)
		}
		f.feed().next(slices.Concat([]petstore.EventType{invUpd, restocked}, want)...)
		total := endpoints * (len(want) + 2)
		now := epoch().Add(time.Hour)
		seen := map[key]bool{}
		for claims := 0; len(seen) < total; claims++ {
			// A deadline, so that a claim gone slow fails here rather than hangs.
			ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
			jobs, err := ws.ClaimDeliveries(ctx, petstore.ClaimOptions{Now: now, Lease: time.Hour, Max: max, Window: petstore.MaxDeliveryWindow})
			cancel()
			must(t, err)
			if due := total - len(seen); len(jobs) != min(max, due) {
				t.Fatalf("claim %d took %d deliveries with %d due, want %d", claims, len(jobs), due, min(max, due))
			}
			rs := make([]petstore.AttemptResult, len(jobs))
			for i, j := range jobs {
				k := key{j.Webhook.ID, j.Delivery.ID}
				if seen[k] {
					t.Fatalf("delivery %v claimed twice", k)
				}
				seen[k] = true
				rs[i] = succeeded(j.Webhook.ID, j.Delivery.ID, now)
			}
			must(t, ws.FinishAttempts(f.ctx, rs))
		}
		if jobs := f.claim(now, max); len(jobs) != 0 {
			t.Errorf("claimed %d more after all were delivered", len(jobs))
		}
	})

	t.Run("an attempt's result is recorded on the delivery and the endpoint, whose window follows", func(t *testing.T) {
		f, c := clocked(t, open)
		ws := f.webhookStore()
		w := f.hook(petstore.InventoryUpdated.Bit())
		p := f.availablePet(1)
		c.Set(epoch().Add(time.Minute))
		f.restock(p.ID)
		c.Set(epoch().Add(2 * time.Minute))
		f.restock(p.ID)
		ev := f.feed().next(invUpd, restocked, invUpd, invUpd)
		a, b, d2 := ev[0].Seq, ev[2].Seq, ev[3].Seq
		t0 := epoch().Add(time.Hour)

		// A failure, tried again in a minute: the endpoint's run of failures begins,
		// and its window halves (2 of 4 → 1).
		t1, t2 := t0.Add(time.Second), t0.Add(time.Minute)
		f.claimWith(petstore.ClaimOptions{Now: t0, Max: 1, Window: 4})
		f.finish(retryAt(w.ID, a, t1, t2))
		d := f.delivery(w.ID, a)
		if d.Status != petstore.DeliveryPending || d.Attempts != 1 || !sameTime(d.NextAttemptAt, &t2) || !sameTime(d.LastAttemptAt, &t1) ||
			d.ResponseStatus != 500 || d.LastError != "the endpoint answered 500" {
			t.Errorf("after a failure the delivery is %+v", d)
		}
		if got, err := ws.Webhook(f.ctx, w.ID); err != nil || !sameTime(got.FailingSince, &t1) || !got.Enabled {
			t.Errorf("after a failure the endpoint is %s, %v; want failing since %v", describeWebhook(got), err, t1)
		}
		// Its window is 2 now; the retry is not due yet.
		if got := claimed(f.claimWith(petstore.ClaimOptions{Now: t1, Max: 10, Window: 4})); !slices.Equal(got, keys(w.ID, b, d2)) {
			t.Errorf("claimed %v after a failure, want the next two events %v (a window of 2)", got, keys(w.ID, b, d2))
		}
		if got := f.claimWith(petstore.ClaimOptions{Now: t1, Max: 10, Window: 4}); len(got) != 0 {
			t.Errorf("claimed %v past the window", claimed(got))
		}
		// A timeout without a status, and a delivery that gives up: the run still
		// began at t1, and the window is down to 1.
		t3 := t1.Add(2 * time.Second)
		f.finish(petstore.AttemptResult{WebhookID: w.ID, DeliveryID: b, At: t3, Status: petstore.DeliveryPending, NextAttemptAt: t3.Add(time.Hour), Error: "timeout"},
			petstore.AttemptResult{WebhookID: w.ID, DeliveryID: d2, At: t3, Status: petstore.DeliveryFailed, ResponseStatus: 410, Error: "gone"})
		d = f.delivery(w.ID, b)
		if d.Attempts != 1 || d.ResponseStatus != 0 || d.LastError != "timeout" || !sameTime(d.LastAttemptAt, &t3) {
			t.Errorf("after a timeout the delivery is %+v", d)
		}
		d = f.delivery(w.ID, d2)
		if d.Status != petstore.DeliveryFailed || d.NextAttemptAt != nil || d.Attempts != 1 || d.ResponseStatus != 410 || d.LastError != "gone" {
			t.Errorf("after giving up the delivery is %+v", d)
		}
		if got, _ := ws.Webhook(f.ctx, w.ID); !sameTime(got.FailingSince, &t1) {
			t.Errorf("after more failures the endpoint fails since %v, want %v", got.FailingSince, t1)
		}
		// The retry of a is due at t2.
		if got := claimed(f.claimWith(petstore.ClaimOptions{Now: t2, Max: 10, Window: 4})); !slices.Equal(got, keys(w.ID, a)) {
			t.Fatalf("claimed %v, want the due retry %v", got, keys(w.ID, a))
		}
		// A success ends the run and keeps the record of a delivery that needed two.
		t4 := t2.Add(time.Second)
		f.finish(succeeded(w.ID, a, t4))
		d = f.delivery(w.ID, a)
		if d.Status != petstore.DeliverySucceeded || d.Attempts != 2 || d.NextAttemptAt != nil || d.ResponseStatus != 200 ||
			d.LastError != "" || !sameTime(d.LastAttemptAt, &t4) {
			t.Errorf("after a success the delivery is %+v", d)
		}
		if got, _ := ws.Webhook(f.ctx, w.ID); got.FailingSince != nil {
			t.Errorf("after a success the endpoint fails since %v, want nil", got.FailingSince)
		}
		// Results of deliveries that are not pending, or of no delivery, are left out.
		f.finish(succeeded(w.ID, d2, t4), succeeded(w.ID, 999999, t4))
		if d := f.delivery(w.ID, d2); d.Status != petstore.DeliveryFailed {
			t.Errorf("a result for a failed delivery changed it: %+v", d)
		}
	})

	t.Run("an endpoint failing since before DisableIfFailingBefore is disabled with a reason, and its deliveries fail", func(t *testing.T) {
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		w := f.hook(petstore.InventoryUpdated.Bit())
		p := f.availablePet(1)
		f.restock(p.ID)
		f.restock(p.ID)
		fd := f.feed()
		ev := fd.next(invUpd, restocked, invUpd, invUpd)
		const days = 24 * time.Hour
		t1 := epoch().Add(time.Minute)
		f.claimWith(petstore.ClaimOptions{Now: t1, Max: 1})
		// The first failure begins the run: no run began before the bound.
		r := retryAt(w.ID, ev[0].Seq, t1, t1.Add(time.Hour))
		r.DisableIfFailingBefore = t1.Add(-5 * days)
		f.finish(r)
		if got, _ := ws.Webhook(f.ctx, w.ID); !got.Enabled {
			t.Fatalf("disabled at its first failure: %s", describeWebhook(got))
		}
		// Six days later, still failing: the run began before the bound.
		t2 := t1.Add(6 * days)
		f.claimWith(petstore.ClaimOptions{Now: t2, Max: 1})
		r = retryAt(w.ID, ev[0].Seq, t2, t2.Add(time.Hour))
		r.DisableIfFailingBefore = t2.Add(-5 * days)
		f.finish(r)
		got, err := ws.Webhook(f.ctx, w.ID)
		must(t, err)
		why := petstore.DisabledReason(t1, t2, r.Error)
		if got.Enabled || got.DisabledReason != why {
			t.Errorf("failing for six days the endpoint is %s, want disabled with the reason %q", describeWebhook(got), why)
		}
		ds := f.deliveries(w.ID)
		if !sameIDs(deliveryIDs(ds), []int64{ev[0].Seq, ev[2].Seq, ev[3].Seq}) {
			t.Fatalf("the deliveries are %v, want %v", deliveryIDs(ds), []int64{ev[0].Seq, ev[2].Seq, ev[3].Seq})
		}
		for _, d := range ds {
			if d.Status != petstore.DeliveryFailed || d.NextAttemptAt != nil || d.LastError != petstore.FailedByDisabling(why) {
				t.Errorf("delivery %d is %s (next at %v, last error %q), want failed for the disabling", d.ID, d.Status, d.NextAttemptAt, d.LastError)
			}
		}
		if d := ds[0]; d.Attempts != 2 || !sameTime(d.LastAttemptAt, &t2) {
			t.Errorf("the attempt that disabled the endpoint was not recorded: %+v", d)
		}
		if jobs := f.claim(t2.Add(days), 10); len(jobs) != 0 {
			t.Errorf("claimed %v of a disabled endpoint", claimed(jobs))
		}
		// Enabled again by an admin, the endpoint starts afresh.
		got, err = ws.UpdateWebhook(f.ctx, w.ID, func(w petstore.Webhook, _ petstore.PendingTypes) (petstore.Webhook, error) {
			w.Enabled = true
			return w, nil
		})
		must(t, err)
		if !got.Enabled || got.DisabledReason != "" || got.FailingSince != nil {
			t.Errorf("enabled again the endpoint is %s, want no reason and no failures", describeWebhook(got))
		}
	})

	t.Run("a run's first attempt starts its retry horizon: RetrySince becomes its time", func(t *testing.T) {
		f, _ := clocked(t, open)
		w := f.hook(petstore.InventoryUpdated.Bit())
		f.availablePet(1)
		ev := f.feed().next(invUpd, restocked)
		id := ev[0].Seq
		t1 := epoch().Add(70 * time.Hour)
		f.fanOut(t1, keys(w.ID, id)...)
		f.finish(retryAt(w.ID, id, t1, t1.Add(time.Hour)))
		t2 := t1.Add(time.Hour)
		jobs := f.fanOut(t2, keys(w.ID, id)...)
		if !jobs[0].RetrySince.Equal(t1) {
			t.Fatalf("claimed with RetrySince %v after the first attempt, want %v (its first attempt)", jobs[0].RetrySince, t1)
		}
		f.finish(retryAt(w.ID, id, t2, t2.Add(time.Hour)))
		jobs = f.fanOut(t2.Add(time.Hour), keys(w.ID, id)...)
		if !jobs[0].RetrySince.Equal(t1) {
			t.Fatalf("claimed with RetrySince %v after the second attempt, want %v still", jobs[0].RetrySince, t1)
		}
	})

	t.Run("a test delivery failing on an endpoint an admin disabled leaves it as the admin left it", func(t *testing.T) {
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		w := f.hook(petstore.InventoryUpdated.Bit())
		f.availablePet(1)
		ev := f.feed().next(invUpd, restocked)
		const days = 24 * time.Hour
		t1 := epoch().Add(time.Minute)
		f.fanOut(t1, keys(w.ID, ev[0].Seq)...)
		f.finish(retryAt(w.ID, ev[0].Seq, t1, t1.Add(time.Hour)))
		disabled := f.disable(w.ID)
		t2 := t1.Add(6 * days)
		test, err := ws.SendTestEvent(f.ctx, w.ID, t2)
		must(t, err)
		f.fanOut(t2, keys(w.ID, test.ID)...)
		r := retryAt(w.ID, test.ID, t2, t2.Add(time.Hour))
		r.DisableIfFailingBefore = t2.Add(-5 * days)
		f.finish(r)
		got, err := ws.Webhook(f.ctx, w.ID)
		must(t, err)
		if got.Enabled || got.DisabledReason != "" || !got.UpdatedAt.Equal(disabled.UpdatedAt) {
			t.Errorf("the endpoint an admin disabled is now %s (updated %v), want it as the admin left it (updated %v)",
				describeWebhook(got), got.UpdatedAt, disabled.UpdatedAt)
		}
		if d := f.delivery(w.ID, test.ID); d.Status != petstore.DeliveryPending || d.Attempts != 1 {
			t.Errorf("the failed test delivery is %s after %d attempts, want pending for its retry", d.Status, d.Attempts)
		}
	})

	t.Run("a success in the same batch as a failure past the bound keeps the endpoint enabled", func(t *testing.T) {
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		w := f.hook(petstore.InventoryUpdated.Bit())
		p := f.availablePet(1)
		f.restock(p.ID)
		ev := f.feed().next(invUpd, restocked, invUpd)
		t1 := epoch()
		f.fanOut(t1, keys(w.ID, ev[0].Seq, ev[2].Seq)...)
		f.finish(retryAt(w.ID, ev[0].Seq, t1, t1))
		f.fanOut(t1.Add(time.Hour), keys(w.ID, ev[0].Seq, ev[2].Seq)...) // the retry, and the other as its lease ran out
		fail := retryAt(w.ID, ev[2].Seq, t1.Add(time.Hour), t1.Add(2*time.Hour))
		fail.DisableIfFailingBefore = t1.Add(time.Minute)
		ok := succeeded(w.ID, ev[0].Seq, t1.Add(time.Hour+time.Second))
		ok.DisableIfFailingBefore = t1.Add(time.Minute)
		f.finish(fail, ok)
		if got, _ := ws.Webhook(f.ctx, w.ID); !got.Enabled || got.FailingSince != nil {
			t.Errorf("after a failure then a success the endpoint is %s", describeWebhook(got))
		}
	})

	t.Run("a delivery retried by hand is pending again, due at once, with a fresh retry horizon", func(t *testing.T) {
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		w, other := f.hook(petstore.MaskAll), f.hook(petstore.PetRestocked.Bit())
		f.availablePet(1)
		ev := f.feed().next(invUpd, restocked)
		failed, done := ev[1].Seq, ev[0].Seq
		t1 := epoch()
		f.fanOut(t1, append(keys(w.ID, done, failed), keys(other.ID, failed)...)...)
		f.finish(succeeded(w.ID, done, t1), succeeded(other.ID, failed, t1),
			petstore.AttemptResult{WebhookID: w.ID, DeliveryID: failed, At: t1, Status: petstore.DeliveryFailed, ResponseStatus: 500, Error: "no"})
		t2 := t1.Add(80 * time.Hour)
		// A failed one, and one that succeeded at once (of which only its span tells).
		for _, id := range []int64{failed, done} {
			got, err := ws.RetryDelivery(f.ctx, w.ID, id, t2, anyone)
			must(t, err)
			if got.ID != id || got.Status != petstore.DeliveryPending || !sameTime(got.NextAttemptAt, &t2) || got.Attempts != 0 {
				t.Errorf("retried, delivery %d is %+v; want pending, due at %v, its count of attempts started afresh", id, got, t2)
			}
			if read := f.delivery(w.ID, id); read.Status != petstore.DeliveryPending || !sameTime(read.NextAttemptAt, &t2) {
				t.Errorf("read back, delivery %d is %+v", id, read)
			}
		}
		// Retried again while pending: left as it is.
		again, err := ws.RetryDelivery(f.ctx, w.ID, failed, t2.Add(time.Hour), anyone)
		must(t, err)
		if !sameTime(again.NextAttemptAt, &t2) {
			t.Errorf("a pending delivery retried again is due at %v, want %v still", again.NextAttemptAt, t2)
		}
		jobs := f.fanOut(t2, keys(w.ID, done, failed)...)
		for _, j := range jobs {
			if !j.RetrySince.Equal(t2) {
				t.Errorf("claimed %d with RetrySince %v, want %v", j.Delivery.ID, j.RetrySince, t2)
			}
		}
		// The one that succeeded at once, retried, succeeds again at once.
		f.finish(succeeded(w.ID, done, t2), succeeded(w.ID, failed, t2))
		if d := f.delivery(w.ID, done); d.Status != petstore.DeliverySucceeded {
			t.Errorf("after its retry succeeded delivery %d is %+v", done, d)
		}
		_, err = ws.RetryDelivery(f.ctx, other.ID, done, t2, anyone)
		wantCode(t, err, petstore.ENotFound) // not an event other subscribes to
		_, err = ws.RetryDelivery(f.ctx, w.ID, 999999, t2, anyone)
		wantCode(t, err, petstore.ENotFound)
		_, err = ws.RetryDelivery(f.ctx, 999999, failed, t2, anyone)
		wantCode(t, err, petstore.ENotFound)

		// Disabled, the endpoint's deliveries are not retried: pending, they would
		// wait for it forever.
		f.disable(w.ID)
		_, err = ws.RetryDelivery(f.ctx, w.ID, failed, t2, anyone)
		wantCode(t, err, petstore.EConflict)
		if read := f.delivery(w.ID, failed); read.Status != petstore.DeliverySucceeded {
			t.Errorf("a refused retry left the delivery %+v", read)
		}
	})

	t.Run("the queue's stats count pending deliveries and unsent events, and date the oldest one's event", func(t *testing.T) {
		f, c := clocked(t, open)
		ws := f.webhookStore()
		st, err := ws.QueueStats(f.ctx)
		must(t, err)
		if st.Pending != 0 || !st.Oldest.IsZero() {
			t.Errorf("empty, the stats are %+v", st)
		}
		w := f.hook(petstore.MaskAll)
		f.availablePet(1) // two events at epoch
		ev := f.feed().next(invUpd, restocked)
		st, err = ws.QueueStats(f.ctx)
		must(t, err)
		if st.Pending != 2 || !st.Oldest.Equal(epoch()) {
			t.Errorf("the stats are %+v, want 2 unsent, the oldest of %v", st, epoch())
		}
		t1 := epoch().Add(time.Hour)
		c.Set(t1)
		f.fanOut(t1, keys(w.ID, ev[0].Seq, ev[1].Seq)...)
		f.finish(succeeded(w.ID, ev[0].Seq, t1))
		st, err = ws.QueueStats(f.ctx)
		must(t, err)
		if st.Pending != 1 || !st.Oldest.Equal(epoch()) {
			t.Errorf("the stats are %+v, want 1 pending, of %v", st, epoch())
		}
		f.finish(succeeded(w.ID, ev[1].Seq, t1))
		st, err = ws.QueueStats(f.ctx)
		must(t, err)
		if st.Pending != 0 || !st.Oldest.IsZero() {
			t.Errorf("delivered, the stats are %+v", st)
		}
	})

	t.Run("purging deletes the events before a time with their deliveries", func(t *testing.T) {
		f, c := clocked(t, open)
		ws := f.webhookStore()
		fd := f.feed()
		w := f.hook(petstore.MaskAll)
		p := f.availablePet(1) // inventory.updated, pet.restocked at epoch
		t1 := epoch().Add(time.Hour)
		c.Set(t1)
		f.restock(p.ID) // inventory.updated at t1
		events := fd.next(invUpd, restocked, invUpd)
		f.fanOut(t1, keys(w.ID, events[0].Seq, events[1].Seq, events[2].Seq)...)
		f.finish(succeeded(w.ID, events[0].Seq, t1), retryAt(w.ID, events[1].Seq, t1, t1.Add(time.Hour)))
		n, err := ws.PurgeEvents(f.ctx, t1)
		must(t, err)
		if n != 2 {
			t.Errorf("purged %d events, want 2", n)
		}
		if got := fd.read(0, petstore.EventFilter{}, petstore.MaxLimit); !sameEvents(got, events[2:]) {
			t.Errorf("the feed holds %v, want %v", seqs(got), seqs(events[2:]))
		}
		for _, e := range events[:2] {
			_, err := ws.Event(f.ctx, e.ID)
			wantCode(t, err, petstore.ENotFound)
		}
		ds := f.deliveries(w.ID)
		if len(ds) != 1 || ds[0].EventID != events[2].ID {
			t.Errorf("the endpoint's deliveries are %+v, want only that of event %s", ds, events[2].ID)
		}
		if n, err := ws.PurgeEvents(f.ctx, t1); err != nil || n != 0 {
			t.Errorf("purged again: %d, %v; want 0", n, err)
		}
	})
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
