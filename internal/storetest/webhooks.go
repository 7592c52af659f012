package storetest

import (
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

// disable disables an endpoint through UpdateWebhook, as an admin does.
func (f *fixture) disable(id int64) petstore.Webhook {
	f.t.Helper()
	w, err := f.webhookStore().UpdateWebhook(f.ctx, id, func(w petstore.Webhook) (petstore.Webhook, error) {
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

// claim claims deliveries at now with a lease of a minute.
func (f *fixture) claim(now time.Time, max int) []petstore.DeliveryJob {
	f.t.Helper()
	jobs, err := f.webhookStore().ClaimDeliveries(f.ctx, now, time.Minute, max)
	must(f.t, err)
	return jobs
}

// claimed lists the ids of claimed deliveries.
func claimed(jobs []petstore.DeliveryJob) []int64 {
	return ids(jobs, func(j petstore.DeliveryJob) int64 { return j.Delivery.ID })
}

func deliveryIDs(list []petstore.Delivery) []int64 {
	return ids(list, func(d petstore.Delivery) int64 { return d.ID })
}

// finish records an attempt.
func (f *fixture) finish(r petstore.AttemptResult) {
	f.t.Helper()
	must(f.t, f.webhookStore().FinishAttempt(f.ctx, r))
}

// succeeded is the result of an attempt answered 200.
func succeeded(id int64, at time.Time) petstore.AttemptResult {
	return petstore.AttemptResult{DeliveryID: id, At: at, Status: petstore.DeliverySucceeded, ResponseStatus: 200}
}

// retryAt is the result of an attempt answered 500, tried again at next.
func retryAt(id int64, at, next time.Time) petstore.AttemptResult {
	return petstore.AttemptResult{DeliveryID: id, At: at, Status: petstore.DeliveryPending, NextAttemptAt: next,
		ResponseStatus: 500, Error: "the endpoint answered 500"}
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

	t.Run("an endpoint changes to what change returns; an error from change changes nothing", func(t *testing.T) {
		f, c := clocked(t, open)
		ws := f.webhookStore()
		w := f.hook(petstore.MaskAll)
		later := epoch().Add(time.Hour)
		c.Set(later)
		expires := later.Add(24 * time.Hour)
		got, err := ws.UpdateWebhook(f.ctx, w.ID, func(cur petstore.Webhook) (petstore.Webhook, error) {
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
		_, err = ws.UpdateWebhook(f.ctx, w.ID, func(cur petstore.Webhook) (petstore.Webhook, error) {
			cur.URL, cur.Enabled = "https://example.net/", false
			return cur, refusal
		})
		if !errors.Is(err, refusal) {
			t.Errorf("UpdateWebhook = %v, want change's error", err)
		}
		read, err = ws.Webhook(f.ctx, w.ID)
		must(t, err)
		wantWebhook(t, read, want)

		_, err = ws.UpdateWebhook(f.ctx, 999999, func(cur petstore.Webhook) (petstore.Webhook, error) { return cur, nil })
		wantCode(t, err, petstore.ENotFound)
	})

	t.Run("an event makes a pending delivery for each enabled endpoint subscribed to its type, and none for an endpoint made after it", func(t *testing.T) {
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
				if d.WebhookID != tt.hook.ID || d.EventID != e.ID || d.EventType != e.Type || d.Status != petstore.DeliveryPending ||
					d.Attempts != 0 || !sameTime(d.NextAttemptAt, &e.CreatedAt) || d.LastAttemptAt != nil ||
					d.ResponseStatus != 0 || d.LastError != "" || !d.CreatedAt.Equal(e.CreatedAt) {
					t.Errorf("%s: delivery %d is %+v, want a pending delivery of event %s (%s), due at %v", tt.name, i, d, e.ID, e.Type, e.CreatedAt)
				}
			}
		}
		if got := events[2].Order; got == nil || got.ID != o.ID {
			t.Errorf("event 2 holds %+v, want order %d", got, o.ID)
		}
		_, err := f.webhookStore().Deliveries(f.ctx, 999999, petstore.Page{})
		wantCode(t, err, petstore.ENotFound)
	})

	t.Run("disabling an endpoint fails its pending deliveries and stops new ones", func(t *testing.T) {
		f := setup(t, open)
		w := f.hook(petstore.InventoryUpdated.Bit())
		p := f.availablePet(1)
		f.restock(p.ID)
		before := f.deliveries(w.ID)
		if len(before) != 2 {
			t.Fatalf("%d deliveries, want 2", len(before))
		}
		f.finish(succeeded(before[0].ID, epoch()))
		if got := f.disable(w.ID); got.Enabled || got.DisabledReason != "" {
			t.Errorf("disabled by an admin: %s, want disabled without a reason", describeWebhook(got))
		}
		f.restock(p.ID)
		after := f.deliveries(w.ID)
		if !sameIDs(deliveryIDs(after), deliveryIDs(before)) {
			t.Fatalf("deliveries %v after disabling, want %v", deliveryIDs(after), deliveryIDs(before))
		}
		if after[0].Status != petstore.DeliverySucceeded {
			t.Errorf("the delivered one is %s, want it left succeeded", after[0].Status)
		}
		if d := after[1]; d.Status != petstore.DeliveryFailed || d.NextAttemptAt != nil {
			t.Errorf("the pending one is %s, next at %v; want failed, with no next attempt", d.Status, d.NextAttemptAt)
		}
		if jobs := f.claim(epoch().Add(time.Hour), 10); len(jobs) != 0 {
			t.Errorf("claimed %v of a disabled endpoint", claimed(jobs))
		}
	})

	t.Run("deleting an endpoint removes it and its deliveries", func(t *testing.T) {
		f := setup(t, open)
		ws := f.webhookStore()
		gone, kept := f.hook(petstore.MaskAll), f.hook(petstore.MaskAll)
		p := f.availablePet(3)
		if n := len(f.deliveries(gone.ID)); n != 2 {
			t.Fatalf("%d deliveries, want 2", n)
		}
		must(t, ws.DeleteWebhook(f.ctx, gone.ID))
		_, err := ws.Webhook(f.ctx, gone.ID)
		wantCode(t, err, petstore.ENotFound)
		_, err = ws.Deliveries(f.ctx, gone.ID, petstore.Page{})
		wantCode(t, err, petstore.ENotFound)
		wantCode(t, ws.DeleteWebhook(f.ctx, gone.ID), petstore.ENotFound)
		st, err := ws.QueueStats(f.ctx)
		must(t, err)
		if st.Pending != 2 {
			t.Errorf("%d pending deliveries, want the other endpoint's 2", st.Pending)
		}
		for _, j := range f.claim(epoch().Add(time.Hour), 10) {
			if j.Webhook.ID != kept.ID {
				t.Errorf("claimed delivery %d of endpoint %d", j.Delivery.ID, j.Webhook.ID)
			}
		}
		f.restock(p.ID)
		if n := len(f.deliveries(kept.ID)); n != 3 {
			t.Errorf("the other endpoint has %d deliveries, want 3", n)
		}
	})

	t.Run("a test event goes to its endpoint only, due at once, and stays out of the feed", func(t *testing.T) {
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		target, other := f.hook(petstore.OrderPlaced.Bit()), f.hook(petstore.MaskAll)
		now := epoch().Add(3 * time.Hour)
		d, err := ws.SendTestEvent(f.ctx, target.ID, now)
		must(t, err)
		if d.WebhookID != target.ID || d.EventType != petstore.WebhookTest || d.Status != petstore.DeliveryPending ||
			!sameTime(d.NextAttemptAt, &now) || d.Attempts != 0 {
			t.Errorf("SendTestEvent = %+v, want a pending webhook.test delivery due at %v", d, now)
		}
		if got := f.deliveries(target.ID); len(got) != 1 || got[0].ID != d.ID || got[0].EventID != d.EventID {
			t.Errorf("the endpoint's deliveries are %+v, want only %+v", got, d)
		}
		if got := f.deliveries(other.ID); len(got) != 0 {
			t.Errorf("another endpoint got %+v", got)
		}
		f.feed().nothing()
		_, err = ws.Event(f.ctx, d.EventID)
		wantCode(t, err, petstore.ENotFound)
		jobs := f.claim(now, 10)
		var job *petstore.DeliveryJob
		for i := range jobs {
			if jobs[i].Delivery.ID == d.ID {
				job = &jobs[i]
			}
		}
		if job == nil {
			t.Fatalf("claimed %v at %v, want test delivery %d among them", claimed(jobs), now, d.ID)
		}
		if e := job.Event; e.ID != d.EventID || e.Type != petstore.WebhookTest || e.Webhook == nil || e.Webhook.ID != target.ID ||
			e.Webhook.URL != target.URL || e.Webhook.Secret != "" {
			t.Errorf("the test event is %+v, want webhook.test holding its endpoint (without secrets)", e)
		}
		if job.Webhook.ID != target.ID || job.Webhook.Secret != target.Secret {
			t.Errorf("the job goes to %s, want %s", describeWebhook(job.Webhook), describeWebhook(target))
		}
		_, err = ws.SendTestEvent(f.ctx, 999999, now)
		wantCode(t, err, petstore.ENotFound)
	})
}

func testDeliveries(t *testing.T, open Opener) {
	t.Run("a claim takes due deliveries only, at most one per endpoint, each endpoint's oldest pending one", func(t *testing.T) {
		f, c := clocked(t, open)
		a, b := f.hook(petstore.InventoryUpdated.Bit()), f.hook(petstore.InventoryUpdated.Bit())
		p := f.availablePet(1) // one inventory.updated (and pet.restocked) at t0
		t0 := epoch()
		c.Set(t0.Add(time.Minute))
		f.restock(p.ID) // the second inventory.updated, at t0+1m
		da, db := f.deliveries(a.ID), f.deliveries(b.ID)
		if len(da) != 2 || len(db) != 2 {
			t.Fatalf("%d and %d deliveries, want 2 each", len(da), len(db))
		}
		if jobs := f.claim(t0.Add(-time.Second), 10); len(jobs) != 0 {
			t.Errorf("claimed %v before they were due", claimed(jobs))
		}
		jobs := f.claim(t0, 10)
		if got := claimed(jobs); !sameIDs(slices.Sorted(slices.Values(got)), []int64{da[0].ID, db[0].ID}) {
			t.Fatalf("claimed %v, want each endpoint's first delivery, %d and %d", got, da[0].ID, db[0].ID)
		}
		events := f.feed().next(invUpd, restocked, invUpd)
		for _, j := range jobs {
			w := a
			if j.Webhook.ID == b.ID {
				w = b
			}
			wantWebhook(t, j.Webhook, w)
			if j.Delivery.EventID != events[0].ID || j.Event.ID != events[0].ID || describeEvent(j.Event) != describeEvent(events[0]) || j.Event.Seq != events[0].Seq {
				t.Errorf("the job's event is %s (%s), want %s (%s)", j.Event.ID, describeEvent(j.Event), events[0].ID, describeEvent(events[0]))
			}
			if !j.RetrySince.Equal(t0) {
				t.Errorf("the job's RetrySince is %v, want the delivery's creation, %v", j.RetrySince, t0)
			}
			if j.Delivery.Status != petstore.DeliveryPending || j.Delivery.Attempts != 0 {
				t.Errorf("the job's delivery is %+v", j.Delivery)
			}
		}
		// The heads are leased (for a minute): nothing behind them is claimed.
		if jobs := f.claim(t0.Add(30*time.Second), 10); len(jobs) != 0 {
			t.Errorf("claimed %v behind leased deliveries", claimed(jobs))
		}
		// a's head is delivered: its next is claimed. b's head waits for a retry in an
		// hour: b's next, due, is not claimed before it, so that b gets its events in order.
		t1 := t0.Add(2 * time.Minute)
		f.finish(succeeded(da[0].ID, t1))
		f.finish(retryAt(db[0].ID, t1, t1.Add(time.Hour)))
		if got := claimed(f.claim(t1, 10)); !sameIDs(got, []int64{da[1].ID}) {
			t.Errorf("claimed %v, want only endpoint a's second delivery %d", got, da[1].ID)
		}
		f.finish(succeeded(da[1].ID, t1))
		if got := claimed(f.claim(t1.Add(time.Hour-time.Second), 10)); len(got) != 0 {
			t.Errorf("claimed %v while b's first waits for its retry", got)
		}
		if got := claimed(f.claim(t1.Add(time.Hour), 10)); !sameIDs(got, []int64{db[0].ID}) {
			t.Errorf("claimed %v when the retry is due, want b's first %d again", got, db[0].ID)
		}
	})

	t.Run("a claim takes at most max deliveries", func(t *testing.T) {
		f := setup(t, open)
		for range 5 {
			f.hook(petstore.MaskAll)
		}
		f.availablePet(1)
		if n := len(f.claim(epoch().Add(time.Hour*24*365*10), 3)); n != 3 {
			t.Errorf("claimed %d, want 3", n)
		}
	})

	t.Run("a lease that runs out makes the delivery claimable again (a process killed mid-delivery)", func(t *testing.T) {
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		w := f.hook(petstore.PetRestocked.Bit())
		f.availablePet(1)
		d := f.deliveries(w.ID)[0]
		now := epoch()
		lease := 30 * time.Second
		jobs, err := ws.ClaimDeliveries(f.ctx, now, lease, 10)
		must(t, err)
		if got := claimed(jobs); !sameIDs(got, []int64{d.ID}) {
			t.Fatalf("claimed %v, want %d", got, d.ID)
		}
		jobs, err = ws.ClaimDeliveries(f.ctx, now.Add(lease-time.Second), lease, 10)
		must(t, err)
		if len(jobs) != 0 {
			t.Errorf("claimed %v under a lease", claimed(jobs))
		}
		jobs, err = ws.ClaimDeliveries(f.ctx, now.Add(lease+time.Second), lease, 10)
		must(t, err)
		if got := claimed(jobs); !sameIDs(got, []int64{d.ID}) {
			t.Errorf("claimed %v after the lease ran out, want %d again", got, d.ID)
		}
	})

	t.Run("concurrent claims never share a delivery and keep each endpoint's order", func(t *testing.T) {
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		const endpoints, events, claimers = 50, 4, 8
		for range endpoints {
			f.hook(petstore.InventoryUpdated.Bit())
		}
		p := f.availablePet(1)
		for range events - 1 {
			f.restock(p.ID)
		}
		now := epoch()
		var (
			mu      sync.Mutex
			times   = map[int64]int{}
			order   = map[int64][]int64{} // endpoint: Seqs of its events, as claimed
			wg      sync.WaitGroup
			total   = endpoints * events
			done    int
			timeout = time.Now().Add(60 * time.Second)
		)
		for range claimers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					mu.Lock()
					finished := done >= total
					mu.Unlock()
					if finished || time.Now().After(timeout) {
						return
					}
					jobs, err := ws.ClaimDeliveries(f.ctx, now, time.Hour, 5)
					if err != nil {
						t.Error(err)
						return
					}
					if len(jobs) == 0 {
						time.Sleep(time.Millisecond)
					}
					mu.Lock()
					for _, j := range jobs {
						times[j.Delivery.ID]++
						order[j.Webhook.ID] = append(order[j.Webhook.ID], j.Event.Seq)
					}
					mu.Unlock()
					for _, j := range jobs {
						if err := ws.FinishAttempt(f.ctx, succeeded(j.Delivery.ID, now)); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						done++
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if len(times) != total {
			t.Errorf("%d deliveries were claimed, want %d", len(times), total)
		}
		for id, n := range times {
			if n != 1 {
				t.Errorf("delivery %d was claimed %d times", id, n)
			}
		}
		for w, seqs := range order {
			for i := 1; i < len(seqs); i++ {
				if seqs[i] <= seqs[i-1] {
					t.Errorf("endpoint %d got its events out of order: %v", w, seqs)
					break
				}
			}
		}
		st, err := ws.QueueStats(f.ctx)
		must(t, err)
		if st.Pending != 0 {
			t.Errorf("%d deliveries are still pending", st.Pending)
		}
	})

	t.Run("an attempt's result is recorded on the delivery and the endpoint", func(t *testing.T) {
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		w := f.hook(petstore.InventoryUpdated.Bit())
		p := f.availablePet(1)
		f.restock(p.ID)
		f.restock(p.ID)
		ds := f.deliveries(w.ID)
		t0 := epoch()

		// A failure, tried again in a minute: the endpoint's run of failures begins.
		t1, t2 := t0.Add(time.Second), t0.Add(time.Minute)
		f.claim(t0, 10)
		f.finish(retryAt(ds[0].ID, t1, t2))
		d := f.delivery(w.ID, ds[0].ID)
		if d.Status != petstore.DeliveryPending || d.Attempts != 1 || !sameTime(d.NextAttemptAt, &t2) || !sameTime(d.LastAttemptAt, &t1) ||
			d.ResponseStatus != 500 || d.LastError != "the endpoint answered 500" {
			t.Errorf("after a failure the delivery is %+v", d)
		}
		if got, err := ws.Webhook(f.ctx, w.ID); err != nil || !sameTime(got.FailingSince, &t1) || !got.Enabled {
			t.Errorf("after a failure the endpoint is %s, %v; want failing since %v", describeWebhook(got), err, t1)
		}
		if jobs := f.claim(t2.Add(-time.Second), 10); len(jobs) != 0 {
			t.Errorf("claimed %v before the retry was due", claimed(jobs))
		}
		// A second failure, a timeout without a status: the run still began at t1.
		f.claim(t2, 10)
		t3 := t2.Add(2 * time.Second)
		f.finish(petstore.AttemptResult{DeliveryID: ds[0].ID, At: t3, Status: petstore.DeliveryPending, NextAttemptAt: t3.Add(time.Hour), Error: "timeout"})
		d = f.delivery(w.ID, ds[0].ID)
		if d.Attempts != 2 || d.ResponseStatus != 0 || d.LastError != "timeout" || !sameTime(d.LastAttemptAt, &t3) {
			t.Errorf("after a second failure the delivery is %+v", d)
		}
		if got, _ := ws.Webhook(f.ctx, w.ID); !sameTime(got.FailingSince, &t1) {
			t.Errorf("after a second failure the endpoint fails since %v, want %v", got.FailingSince, t1)
		}
		// A success ends the run.
		t4 := t3.Add(time.Hour)
		f.claim(t4, 10)
		f.finish(succeeded(ds[0].ID, t4))
		d = f.delivery(w.ID, ds[0].ID)
		if d.Status != petstore.DeliverySucceeded || d.Attempts != 3 || d.NextAttemptAt != nil || d.ResponseStatus != 200 ||
			d.LastError != "" || !sameTime(d.LastAttemptAt, &t4) {
			t.Errorf("after a success the delivery is %+v", d)
		}
		if got, _ := ws.Webhook(f.ctx, w.ID); got.FailingSince != nil {
			t.Errorf("after a success the endpoint fails since %v, want nil", got.FailingSince)
		}
		// A delivery that gives up is failed.
		if got := claimed(f.claim(t4, 10)); !sameIDs(got, []int64{ds[1].ID}) {
			t.Fatalf("claimed %v, want %d", got, ds[1].ID)
		}
		f.finish(petstore.AttemptResult{DeliveryID: ds[1].ID, At: t4, Status: petstore.DeliveryFailed, ResponseStatus: 410, Error: "gone"})
		d = f.delivery(w.ID, ds[1].ID)
		if d.Status != petstore.DeliveryFailed || d.NextAttemptAt != nil || d.Attempts != 1 || d.ResponseStatus != 410 || d.LastError != "gone" {
			t.Errorf("after giving up the delivery is %+v", d)
		}
		// The next one is claimable at once: a failed delivery does not hold the line.
		if got := claimed(f.claim(t4, 10)); !sameIDs(got, []int64{ds[2].ID}) {
			t.Errorf("claimed %v, want %d", got, ds[2].ID)
		}
		wantCode(t, ws.FinishAttempt(f.ctx, succeeded(999999, t4)), petstore.ENotFound)
	})

	t.Run("an endpoint failing since before DisableIfFailingBefore is disabled with a reason, and its pending deliveries fail", func(t *testing.T) {
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		w := f.hook(petstore.InventoryUpdated.Bit())
		p := f.availablePet(1)
		f.restock(p.ID)
		ds := f.deliveries(w.ID)
		const days = 24 * time.Hour
		t1 := epoch().Add(time.Minute)
		f.claim(t1, 10)
		// The first failure begins the run: no run began before the bound.
		r := retryAt(ds[0].ID, t1, t1.Add(time.Hour))
		r.DisableIfFailingBefore = t1.Add(-5 * days)
		f.finish(r)
		if got, _ := ws.Webhook(f.ctx, w.ID); !got.Enabled {
			t.Fatalf("disabled at its first failure: %s", describeWebhook(got))
		}
		// Six days later, still failing: the run began before the bound.
		t2 := t1.Add(6 * days)
		f.claim(t2, 10)
		r = retryAt(ds[0].ID, t2, t2.Add(time.Hour))
		r.DisableIfFailingBefore = t2.Add(-5 * days)
		f.finish(r)
		got, err := ws.Webhook(f.ctx, w.ID)
		must(t, err)
		why := petstore.DisabledReason(t1, t2, r.Error)
		if got.Enabled || got.DisabledReason != why {
			t.Errorf("failing for six days the endpoint is %s, want disabled with the reason %q", describeWebhook(got), why)
		}
		for _, d := range f.deliveries(w.ID) {
			if d.Status != petstore.DeliveryFailed || d.NextAttemptAt != nil || d.LastError != petstore.FailedByDisabling(why) && d.ID != ds[0].ID {
				t.Errorf("delivery %d is %s (next at %v, last error %q), want failed for the disabling", d.ID, d.Status, d.NextAttemptAt, d.LastError)
			}
		}
		if d := f.delivery(w.ID, ds[0].ID); d.Attempts != 2 || !sameTime(d.LastAttemptAt, &t2) {
			t.Errorf("the attempt that disabled the endpoint was not recorded: %+v", d)
		}
		if jobs := f.claim(t2.Add(days), 10); len(jobs) != 0 {
			t.Errorf("claimed %v of a disabled endpoint", claimed(jobs))
		}
		// Enabled again by an admin, the endpoint starts afresh.
		got, err = ws.UpdateWebhook(f.ctx, w.ID, func(w petstore.Webhook) (petstore.Webhook, error) {
			w.Enabled = true
			return w, nil
		})
		must(t, err)
		if !got.Enabled || got.DisabledReason != "" || got.FailingSince != nil {
			t.Errorf("enabled again the endpoint is %s, want no reason and no failures", describeWebhook(got))
		}
	})

	t.Run("a run's first attempt starts its retry horizon: RetrySince becomes its time", func(t *testing.T) {
		// A delivery that waited behind its endpoint's earlier ones for days keeps its
		// whole horizon from its first attempt, as the document promises.
		f, _ := clocked(t, open)
		w := f.hook(petstore.InventoryUpdated.Bit())
		p := f.availablePet(1)
		f.restock(p.ID)
		ds := f.deliveries(w.ID)
		t1 := epoch().Add(70 * time.Hour)
		f.claim(t1, 10)
		f.finish(retryAt(ds[0].ID, t1, t1.Add(time.Hour)))
		t2 := t1.Add(time.Hour)
		jobs := f.claim(t2, 10)
		if len(jobs) != 1 || !jobs[0].RetrySince.Equal(t1) {
			t.Fatalf("claimed %+v after the first attempt, want delivery %d with RetrySince %v (its first attempt)", jobs, ds[0].ID, t1)
		}
		f.finish(retryAt(ds[0].ID, t2, t2.Add(time.Hour)))
		jobs = f.claim(t2.Add(time.Hour), 10)
		if len(jobs) != 1 || !jobs[0].RetrySince.Equal(t1) {
			t.Fatalf("claimed %+v after the second attempt, want RetrySince still %v", jobs, t1)
		}
	})

	t.Run("a test delivery failing on an endpoint an admin disabled leaves it as the admin left it", func(t *testing.T) {
		// An admin disables an endpoint that has been failing, then sends it a test
		// event, which fails too: the endpoint stays disabled by the admin (no reason:
		// the service did not disable it) and the test delivery is retried as any other.
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		w := f.hook(petstore.InventoryUpdated.Bit())
		p := f.availablePet(1)
		f.restock(p.ID)
		ds := f.deliveries(w.ID)
		const days = 24 * time.Hour
		t1 := epoch().Add(time.Minute)
		f.claim(t1, 10)
		f.finish(retryAt(ds[0].ID, t1, t1.Add(time.Hour)))
		disabled := f.disable(w.ID)
		t2 := t1.Add(6 * days)
		test, err := ws.SendTestEvent(f.ctx, w.ID, t2)
		must(t, err)
		if jobs := f.claim(t2, 10); len(jobs) != 1 || jobs[0].Delivery.ID != test.ID {
			t.Fatalf("claimed %v, want the test delivery %d", claimed(jobs), test.ID)
		}
		r := retryAt(test.ID, t2, t2.Add(time.Hour))
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

	t.Run("a success does not disable the endpoint, whatever the bound", func(t *testing.T) {
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		w := f.hook(petstore.InventoryUpdated.Bit())
		p := f.availablePet(1)
		f.restock(p.ID)
		ds := f.deliveries(w.ID)
		t1 := epoch()
		f.claim(t1, 10)
		f.finish(retryAt(ds[0].ID, t1, t1))
		f.claim(t1.Add(time.Hour), 10)
		r := succeeded(ds[0].ID, t1.Add(time.Hour))
		r.DisableIfFailingBefore = t1.Add(time.Minute)
		f.finish(r)
		if got, _ := ws.Webhook(f.ctx, w.ID); !got.Enabled || got.FailingSince != nil {
			t.Errorf("after a success the endpoint is %s", describeWebhook(got))
		}
	})

	t.Run("a delivery retried by hand is pending again, due at once, with a fresh retry horizon", func(t *testing.T) {
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		w, other := f.hook(petstore.PetRestocked.Bit()), f.hook(petstore.PetRestocked.Bit())
		f.availablePet(1)
		d := f.deliveries(w.ID)[0]
		t1 := epoch()
		f.claim(t1, 10)
		f.finish(petstore.AttemptResult{DeliveryID: d.ID, At: t1, Status: petstore.DeliveryFailed, ResponseStatus: 500, Error: "no"})
		t2 := t1.Add(80 * time.Hour)
		got, err := ws.RetryDelivery(f.ctx, w.ID, d.ID, t2)
		must(t, err)
		if got.ID != d.ID || got.Status != petstore.DeliveryPending || !sameTime(got.NextAttemptAt, &t2) || got.Attempts != 0 {
			t.Errorf("retried, the delivery is %+v; want pending, due at %v, its count of attempts started afresh", got, t2)
		}
		if read := f.delivery(w.ID, d.ID); read.Status != petstore.DeliveryPending || !sameTime(read.NextAttemptAt, &t2) {
			t.Errorf("read back, the delivery is %+v", read)
		}
		// Retried again while pending: left as it is.
		again, err := ws.RetryDelivery(f.ctx, w.ID, d.ID, t2.Add(time.Hour))
		must(t, err)
		if !sameTime(again.NextAttemptAt, &t2) {
			t.Errorf("a pending delivery retried again is due at %v, want %v still", again.NextAttemptAt, t2)
		}
		jobs := f.claim(t2, 10)
		var job *petstore.DeliveryJob
		for i := range jobs {
			if jobs[i].Delivery.ID == d.ID {
				job = &jobs[i]
			}
		}
		if job == nil || !job.RetrySince.Equal(t2) {
			t.Errorf("claimed %+v, want delivery %d with RetrySince %v", jobs, d.ID, t2)
		}
		_, err = ws.RetryDelivery(f.ctx, other.ID, d.ID, t2)
		wantCode(t, err, petstore.ENotFound)
		_, err = ws.RetryDelivery(f.ctx, w.ID, 999999, t2)
		wantCode(t, err, petstore.ENotFound)
		_, err = ws.RetryDelivery(f.ctx, 999999, d.ID, t2)
		wantCode(t, err, petstore.ENotFound)

		// Disabled, the endpoint's deliveries fail and are not retried: pending, they
		// would wait for it forever.
		_, err = ws.UpdateWebhook(f.ctx, w.ID, func(w petstore.Webhook) (petstore.Webhook, error) {
			w.Enabled = false
			return w, nil
		})
		must(t, err)
		if read := f.delivery(w.ID, d.ID); read.Status != petstore.DeliveryFailed {
			t.Errorf("after disabling its endpoint the delivery is %+v, want failed", read)
		}
		_, err = ws.RetryDelivery(f.ctx, w.ID, d.ID, t2)
		wantCode(t, err, petstore.EConflict)
		if read := f.delivery(w.ID, d.ID); read.Status != petstore.DeliveryFailed {
			t.Errorf("a refused retry left the delivery %+v, want failed", read)
		}
	})

	t.Run("the queue's stats count pending deliveries and date the oldest one's event", func(t *testing.T) {
		f, c := clocked(t, open)
		ws := f.webhookStore()
		st, err := ws.QueueStats(f.ctx)
		must(t, err)
		if st.Pending != 0 || !st.Oldest.IsZero() {
			t.Errorf("empty, the stats are %+v", st)
		}
		w := f.hook(petstore.InventoryUpdated.Bit())
		p := f.availablePet(1) // at epoch
		t1 := epoch().Add(time.Hour)
		c.Set(t1)
		f.restock(p.ID)
		st, err = ws.QueueStats(f.ctx)
		must(t, err)
		if st.Pending != 2 || !st.Oldest.Equal(epoch()) {
			t.Errorf("the stats are %+v, want 2 pending, the oldest of %v", st, epoch())
		}
		ds := f.deliveries(w.ID)
		f.claim(t1, 10)
		f.finish(succeeded(ds[0].ID, t1))
		st, err = ws.QueueStats(f.ctx)
		must(t, err)
		if st.Pending != 1 || !st.Oldest.Equal(t1) {
			t.Errorf("the stats are %+v, want 1 pending, the oldest of %v", st, t1)
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
