package storetest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The dispatcher's side of the store: claims, attempts and their results, retries by
// hand, the queue's stats and the purge of old events.

func testDeliveries(t *testing.T, open Opener) {
	t.Run("a claim takes up to an endpoint's window less what it has in flight, and each delivery once", func(t *testing.T) { testClaimWindow(t, open) })
	t.Run("a claim shares max among the endpoints in turn", func(t *testing.T) { testClaimShared(t, open) })
	t.Run("a lease that runs out makes the delivery claimable again (a process killed mid-delivery)", func(t *testing.T) { testClaimLease(t, open) })
	t.Run("concurrent claims never share a delivery and take every one", func(t *testing.T) { testClaimConcurrent(t, open) })
	t.Run("at scale every claim takes a full batch while that much is due (100 endpoints, 150,000 deliveries)", func(t *testing.T) { testClaimAtScale(t, open) })
	t.Run("an attempt's result is recorded on the delivery and the endpoint, whose window follows", func(t *testing.T) { testAttemptRecorded(t, open) })
	t.Run("an endpoint failing since before DisableIfFailingBefore is disabled with a reason, and its deliveries fail", func(t *testing.T) { testAttemptDisables(t, open) })
	t.Run("a run's first attempt starts its retry horizon: RetrySince becomes its time", func(t *testing.T) { testAttemptRetrySince(t, open) })
	t.Run("a test delivery failing on an endpoint an admin disabled leaves it as the admin left it", func(t *testing.T) { testAttemptOnAdminDisabled(t, open) })
	t.Run("a success in the same batch as a failure past the bound keeps the endpoint enabled", func(t *testing.T) { testAttemptSuccessInBatch(t, open) })
	t.Run("a delivery retried by hand is pending again, due at once, with a fresh retry horizon", func(t *testing.T) { testDeliveryRetried(t, open) })
	t.Run("the queue's stats count pending deliveries and unsent events, and date the oldest one's event", func(t *testing.T) { testQueueStats(t, open) })
	t.Run("purging deletes the events before a time with their deliveries", func(t *testing.T) { testEventPurge(t, open) })
}

func testClaimWindow(t *testing.T, open Opener) {
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
}

func testClaimShared(t *testing.T, open Opener) {
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
}

func testClaimLease(t *testing.T, open Opener) {
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
}

func testClaimConcurrent(t *testing.T, open Opener) {
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
}

func testClaimAtScale(t *testing.T, open Opener) {
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
}

func testAttemptRecorded(t *testing.T, open Opener) {
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
}

func testAttemptDisables(t *testing.T, open Opener) {
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
}

func testAttemptRetrySince(t *testing.T, open Opener) {
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
}

func testAttemptOnAdminDisabled(t *testing.T, open Opener) {
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
}

func testAttemptSuccessInBatch(t *testing.T, open Opener) {
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
}

func testDeliveryRetried(t *testing.T, open Opener) {
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
}

func testQueueStats(t *testing.T, open Opener) {
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
}

func testEventPurge(t *testing.T, open Opener) {
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
}
