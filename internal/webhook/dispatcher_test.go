package webhook_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/webhook"
)

const secret = "whsec_test"

// TestDispatcherDeliversThroughFailures: a receiver that fails, then times out, then
// recovers gets every event, each signed, in order; the retries are spaced as Backoff
// says, on the test clock, and later events wait for the first.
func TestDispatcherDeliversThroughFailures(t *testing.T) {
	clock := &testClock{t: now}
	release := make(chan struct{})
	defer close(release)
	rc := newReceiver(t, secret, clock.Now, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 0:
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte("database\n\tdown"))
		case 1:
			// Longer than the sender waits: it gives up and closes the connection.
			select {
			case <-r.Context().Done():
			case <-release:
			}
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	q := newMemQueue()
	wh := q.addWebhook(rc.URL+"/hooks", secret)
	ids := q.addEvent(now, "evt_1", wh)
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue:  q,
		Sender: webhook.NewSender(webhook.SenderOptions{Timeout: 2 * time.Second, AllowPrivate: true}),
		Encode: encodeEvent,
		Now:    clock.Now,
		Rand:   rand.New(rand.NewPCG(1, 2)),
		// Only nudges (the test's, and those of ending attempts) move it on.
		Poll: time.Hour,
	})
	run(t, d)

	retries := []struct {
		status int
		err    string
	}{
		{500, "the endpoint answered 500"}, // from loopback: the answer is not quoted
		{0, "no answer within 2s"},
	}
	for i, want := range retries {
		waitFor(t, "attempt "+string(rune('1'+i)), func() bool { got, _ := q.delivery(ids[0]); return got.Attempts == i+1 })
		got, leased := q.delivery(ids[0])
		if got.Status != petstore.DeliveryPending || leased || got.ResponseStatus != want.status || got.LastError != want.err {
			t.Fatalf("after attempt %d: %s, leased %v, status %d, error %q; want pending, %d, %q",
				i+1, got.Status, leased, got.ResponseStatus, got.LastError, want.status, want.err)
		}
		checkSpacing(t, i, *got.LastAttemptAt, *got.NextAttemptAt)
		clock.Set(*got.NextAttemptAt)
		d.Nudge()
	}
	waitFor(t, "every delivery", func() bool {
		for _, id := range ids {
			if got, _ := q.delivery(id); got.Status != petstore.DeliverySucceeded {
				return false
			}
		}
		return true
	})
	got, forged := rc.requests()
	if want := []string{"evt_1", "evt_1", "evt_1"}; !slices.Equal(got, want) {
		t.Errorf("the receiver got %q, want %q", got, want)
	}
	if len(forged) > 0 {
		t.Errorf("signatures that do not verify: %q", forged)
	}
	if d, _ := q.delivery(ids[0]); d.Attempts != 3 || d.LastError != "" || d.ResponseStatus != 204 {
		t.Errorf("the first delivery: %d attempts, error %q, status %d", d.Attempts, d.LastError, d.ResponseStatus)
	}
	if w := q.webhook(wh); w.FailingSince != nil || !w.Enabled {
		t.Errorf("the endpoint after a success: failing since %v, enabled %v", w.FailingSince, w.Enabled)
	}
}

// checkSpacing fails the test unless the wait after failed attempt number attempt
// (0 for the first) is within DefaultBackoff's bounds: at least a second, at most
// Base·2ⁿ capped at Max.
func checkSpacing(t *testing.T, attempt int, at, next time.Time) {
	t.Helper()
	b := webhook.DefaultBackoff
	ceiling := b.Max
	if attempt < 20 && b.Base<<attempt < b.Max {
		ceiling = b.Base << attempt
	}
	if wait := next.Sub(at); wait < time.Second || wait > ceiling {
		t.Fatalf("after attempt %d the retry is %s later, want 1s to %s", attempt+1, wait, ceiling)
	}
}

// TestDispatcherGivesUp: a receiver that always fails is retried with Backoff's
// spacing until the 72-hour horizon, then the delivery is failed; an endpoint that
// fails for longer than DisableAfter is disabled with its pending deliveries.
func TestDispatcherGivesUp(t *testing.T) {
	tests := []struct {
		name         string
		disableAfter time.Duration
		events       []string
		disabled     bool
	}{
		{"at the retry horizon", 0, []string{"evt_1"}, false},
		{"when the endpoint fails for longer than DisableAfter", time.Hour, []string{"evt_1", "evt_2"}, true},
		{"never disabled with a negative DisableAfter", -1, []string{"evt_1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &testClock{t: now}
			rc := newReceiver(t, secret, clock.Now, answerStatus(http.StatusServiceUnavailable))
			q := newMemQueue()
			wh := q.addWebhook(rc.URL, secret)
			var ids []int64
			for i, e := range tt.events {
				// Later events are not due within the test: the disabling fails them
				// before their first attempt.
				ids = append(ids, q.addEvent(now.Add(time.Duration(i)*1000*time.Hour), e, wh)...)
			}
			d := webhook.NewDispatcher(webhook.DispatcherOptions{
				Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{Timeout: 10 * time.Second, AllowPrivate: true}),
				Encode: encodeEvent, Now: clock.Now, Rand: rand.New(rand.NewPCG(3, 4)),
				Poll: time.Hour, DisableAfter: tt.disableAfter,
			})
			run(t, d)
			var last, previous time.Time // the last two attempts
			for attempt := 0; ; attempt++ {
				if attempt > 200 {
					t.Fatal("still retrying after 200 attempts")
				}
				waitFor(t, "an attempt", func() bool { got, _ := q.delivery(ids[0]); return got.Attempts == attempt+1 })
				got, _ := q.delivery(ids[0])
				previous, last = last, *got.LastAttemptAt
				if got.Status != petstore.DeliveryPending {
					if got.Status != petstore.DeliveryFailed || !strings.HasPrefix(got.LastError, "the endpoint answered 503") {
						t.Fatalf("ended %s with %q", got.Status, got.LastError)
					}
					break
				}
				checkSpacing(t, attempt, last, *got.NextAttemptAt)
				if got.NextAttemptAt.Sub(now) > webhook.DefaultBackoff.Horizon {
					t.Fatalf("a retry at %s, past the horizon", got.NextAttemptAt.Sub(now))
				}
				clock.Set(*got.NextAttemptAt)
				d.Nudge()
			}
			w := q.webhook(wh)
			if w.Enabled == tt.disabled {
				t.Fatalf("the endpoint is enabled=%v, want %v", w.Enabled, !tt.disabled)
			}
			if tt.disabled {
				// Disabled by the first attempt more than an hour into the failures.
				if last.Sub(now) <= time.Hour || previous.Sub(now) > time.Hour {
					t.Fatalf("disabled at %s of failures, the attempt before at %s", last.Sub(now), previous.Sub(now))
				}
				for _, id := range ids[1:] {
					if got, _ := q.delivery(id); got.Status != petstore.DeliveryFailed || got.Attempts != 0 {
						t.Fatalf("a later delivery of the disabled endpoint: %s after %d attempts", got.Status, got.Attempts)
					}
				}
				return
			}
			// Given up by the first retry that would fall past 72 h, which is drawn at
			// most 6 h ahead: the last attempt was in the last 6 h of the horizon.
			if h := webhook.DefaultBackoff; last.Sub(now) > h.Horizon || last.Sub(now) <= h.Horizon-h.Max {
				t.Fatalf("given up after %s of retries", last.Sub(now))
			}
			if got, _ := q.delivery(ids[0]); !strings.HasSuffix(got.LastError, "; no more retries: the next would fall past the 72h retry horizon") {
				t.Fatalf("the error of the last attempt: %q", got.LastError)
			}
		})
	}
}

// TestDispatcherHorizonCountsFromTheFirstAttempt: a delivery made 70 hours before
// its first attempt (its endpoint's window full, or the service busy all that time) is still retried for 72 hours after that attempt, as the document says,
// not given up 2 hours later because it was made long before.
func TestDispatcherHorizonCountsFromTheFirstAttempt(t *testing.T) {
	clock := &testClock{t: now}
	rc := newReceiver(t, secret, clock.Now, answerStatus(http.StatusServiceUnavailable))
	q := newMemQueue()
	wh := q.addWebhook(rc.URL, secret)
	made := now.Add(-70 * time.Hour)
	id := q.addEvent(made, "evt_1", wh)[0]
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{Timeout: 10 * time.Second, AllowPrivate: true}),
		Encode: encodeEvent, Now: clock.Now, Rand: rand.New(rand.NewPCG(5, 6)),
		Poll: time.Hour, DisableAfter: -1,
	})
	run(t, d)
	var last time.Time
	for attempt := 0; ; attempt++ {
		if attempt > 200 {
			t.Fatal("still retrying after 200 attempts")
		}
		waitFor(t, "an attempt", func() bool { got, _ := q.delivery(id); return got.Attempts == attempt+1 })
		got, _ := q.delivery(id)
		last = *got.LastAttemptAt
		if got.Status != petstore.DeliveryPending {
			break
		}
		clock.Set(*got.NextAttemptAt)
		d.Nudge()
	}
	// Given up by the first retry past 72 h after the first attempt (now), drawn at
	// most 6 h ahead.
	if h := webhook.DefaultBackoff; last.Sub(now) > h.Horizon || last.Sub(now) <= h.Horizon-h.Max {
		t.Fatalf("given up %s after the first attempt, want within the last %s of %s", last.Sub(now), h.Max, h.Horizon)
	}
}

// TestDispatcherEndpointsDoNotBlockEachOther: an endpoint that fails or hangs holds
// back its own deliveries only, however few the workers: its window bounds what it
// holds.
func TestDispatcherEndpointsDoNotBlockEachOther(t *testing.T) {
	tests := []struct {
		name  string
		hangs bool
	}{
		{"an endpoint that answers 500", false},
		{"an endpoint that does not answer", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			failing := newReceiver(t, secret, time.Now, func(_ int, w http.ResponseWriter, r *http.Request) {
				if tt.hangs {
					select {
					case <-release:
					case <-r.Context().Done():
					}
				}
				w.WriteHeader(http.StatusInternalServerError)
			})
			healthy := newReceiver(t, secret, time.Now, answerStatus(http.StatusOK))
			q := newMemQueue()
			bad, good := q.addWebhook(failing.URL, secret), q.addWebhook(healthy.URL, secret)
			var want []string
			var first int64
			for i := range 5 {
				id := "evt_" + string(rune('a'+i))
				ids := q.addEvent(time.Now(), id, bad, good)
				if i == 0 {
					first = ids[0]
				}
				want = append(want, id)
			}
			d := webhook.NewDispatcher(webhook.DispatcherOptions{
				Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{Timeout: time.Minute, AllowPrivate: true}),
				Encode: encodeEvent,
				// Retries come an hour later: within the test, the failing endpoint
				// gets its first event once.
				Backoff: webhook.Backoff{Base: time.Hour, Max: time.Hour, Horizon: 72 * time.Hour},
				Workers: 2, Window: 1, Poll: time.Hour,
			})
			run(t, d)
			waitFor(t, "the healthy endpoint's events", func() bool { got, _ := healthy.requests(); return len(got) == len(want) })
			if tt.hangs {
				// Everything the healthy endpoint got, it got while the failing one
				// held its attempt open.
				if got, leased := q.delivery(first); got.Attempts != 0 || !leased {
					t.Fatalf("the hanging endpoint's attempt ended (%d attempts) before the healthy one was served", got.Attempts)
				}
			}
			close(release)
			waitFor(t, "the failing endpoint's attempt", func() bool { got, _ := q.delivery(first); return got.Attempts == 1 })
			// No order holds between an endpoint's deliveries.
			if got, forged := healthy.requests(); !slices.Equal(slices.Sorted(slices.Values(got)), want) || len(forged) > 0 {
				t.Errorf("the healthy endpoint got %q (forged %q), want %q in any order", got, forged, want)
			}
			// Each of its events was tried once: retries come an hour later.
			if got, _ := failing.requests(); len(got) == 0 || got[0] != want[0] || len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
				t.Errorf("the failing endpoint got %q, want %s first and no event twice", got, want[0])
			}
		})
	}
}

// TestDispatcherNudge: a nudge makes a waiting dispatcher claim at once, not at its
// next poll; nudges never block, running or not.
func TestDispatcherNudge(t *testing.T) {
	rc := newReceiver(t, secret, time.Now, answerStatus(http.StatusOK))
	q := newMemQueue()
	wh := q.addWebhook(rc.URL, secret)
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{AllowPrivate: true}),
		Encode: encodeEvent, Poll: time.Hour,
	})
	d.Nudge()
	d.Nudge() // a second nudge before Run does not block
	run(t, d)
	// The nudges above may wake it once more; once it claims a second time with no
	// event queued, it waits for the next nudge or an hour.
	waitFor(t, "the first claims", func() bool { return q.claimCount() >= 2 })
	ids := q.addEvent(time.Now(), "evt_1", wh)
	d.Nudge()
	waitFor(t, "the delivery after a nudge", func() bool { got, _ := q.delivery(ids[0]); return got.Status == petstore.DeliverySucceeded })
}

// TestDispatcherStops: Run returns after its context is done, letting the attempt in
// flight end within the grace, or cutting it off past it; an attempt cut off is
// tried again when its lease runs out.
func TestDispatcherStops(t *testing.T) {
	tests := []struct {
		name     string
		grace    time.Duration
		answered bool // whether the receiver answers during the grace
	}{
		{"an attempt that ends within the grace is recorded", time.Minute, true},
		{"an attempt past the grace is cut off and made again later", 100 * time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &testClock{t: now}
			release := make(chan struct{})
			arrived := make(chan struct{}, 10)
			rc := newReceiver(t, secret, clock.Now, func(n int, w http.ResponseWriter, r *http.Request) {
				arrived <- struct{}{}
				if n == 0 {
					select {
					case <-release:
					case <-r.Context().Done():
						return
					}
				}
				w.WriteHeader(http.StatusOK)
			})
			q := newMemQueue()
			ids := q.addEvent(now, "evt_1", q.addWebhook(rc.URL, secret))
			opts := webhook.DispatcherOptions{
				Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{Timeout: time.Minute, AllowPrivate: true}),
				Encode: encodeEvent, Now: clock.Now, Poll: time.Hour, Grace: tt.grace, Lease: 2 * time.Minute,
			}
			d := webhook.NewDispatcher(opts)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- d.Run(ctx) }()
			select {
			case <-arrived:
			case <-time.After(30 * time.Second):
				t.Fatal("no attempt")
			}
			cancel()
			if tt.answered {
				select {
				case <-done:
					t.Fatal("Run returned with an attempt in flight, within the grace")
				default:
				}
				close(release)
			} else {
				defer close(release)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Run returned %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return after its context was cancelled")
			}
			got, leased := q.delivery(ids[0])
			if tt.answered {
				if got.Status != petstore.DeliverySucceeded || got.Attempts != 1 {
					t.Fatalf("after the stop: %s, %d attempts", got.Status, got.Attempts)
				}
				return
			}
			if got.Status != petstore.DeliveryPending || got.Attempts != 0 || !leased {
				t.Fatalf("after the cut-off: %s, %d attempts, leased %v; want pending, not counted, leased", got.Status, got.Attempts, leased)
			}
			// Another run (here, the same dispatcher again) takes it once the lease
			// has run out, not before.
			run(t, d)
			waitFor(t, "a claim within the lease", func() bool { return q.claimCount() >= 2 })
			clock.Set(now.Add(opts.Lease + time.Second))
			d.Nudge()
			waitFor(t, "the delivery after the lease ran out", func() bool { got, _ := q.delivery(ids[0]); return got.Status == petstore.DeliverySucceeded })
			if got, _ := rc.requests(); !slices.Equal(got, []string{"evt_1", "evt_1"}) {
				t.Fatalf("the receiver got %q, want evt_1 twice (at least once)", got)
			}
		})
	}
}

// TestDispatcherQueueErrors: a queue that fails is tried again after the poll
// interval, not at once, and the deliveries go out once it answers.
func TestDispatcherQueueErrors(t *testing.T) {
	rc := newReceiver(t, secret, time.Now, answerStatus(http.StatusOK))
	q := newMemQueue()
	ids := q.addEvent(time.Now(), "evt_1", q.addWebhook(rc.URL, secret))
	q.claimErrs = 3
	const poll = 100 * time.Millisecond
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{AllowPrivate: true}),
		Encode: encodeEvent, Poll: poll,
	})
	start := time.Now()
	run(t, d)
	// Nudges while the queue fails do not make it claim sooner.
	for range 3 {
		d.Nudge()
	}
	waitFor(t, "the delivery", func() bool { got, _ := q.delivery(ids[0]); return got.Status == petstore.DeliverySucceeded })
	if elapsed := time.Since(start); elapsed < 3*poll {
		t.Fatalf("delivered %s after three failed claims, want at least three poll intervals (%s)", elapsed, 3*poll)
	}
}

// TestDispatcherWorkers: no more attempts are in flight than there are workers, and
// every endpoint is served as workers come free. A delivery answered and waiting for
// its record holds its lease but not its worker (maxUnrecorded), so leases are not
// what is counted: requests at the receiver are.
func TestDispatcherWorkers(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 10)
	var atReceiver, mostAtReceiver atomic.Int64
	rc := newReceiver(t, secret, time.Now, func(_ int, w http.ResponseWriter, r *http.Request) {
		n := atReceiver.Add(1)
		defer atReceiver.Add(-1)
		for m := mostAtReceiver.Load(); n > m && !mostAtReceiver.CompareAndSwap(m, n); m = mostAtReceiver.Load() {
		}
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	q := newMemQueue()
	var ids []int64
	for i := range 5 {
		// Five endpoints, each with a window to spare: only the workers hold them back.
		ids = append(ids, q.addEvent(time.Now(), "evt_"+string(rune('a'+i)), q.addWebhook(rc.URL+"/"+string(rune('a'+i)), secret))...)
	}
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{Timeout: time.Minute, AllowPrivate: true}),
		Encode: encodeEvent, Workers: 2, Poll: 10 * time.Millisecond,
	})
	run(t, d)
	// Two attempts hang while the loop polls every 10 ms. The pause only gives a
	// loop that claimed past its workers time to do so; the test cannot fail for a
	// correct one, however slow the machine.
	for range 2 {
		<-arrived
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(arrived); n != 0 {
		t.Fatalf("%d more attempts began while both workers were busy", n)
	}
	close(release)
	waitFor(t, "every delivery", func() bool {
		for _, id := range ids {
			if got, _ := q.delivery(id); got.Status != petstore.DeliverySucceeded {
				return false
			}
		}
		return true
	})
	if most := mostAtReceiver.Load(); most > 2 {
		t.Fatalf("%d attempts were at the receiver at once with 2 workers", most)
	}
}

// TestDispatcherAnsweredAttemptsFreeTheirWorkers: a worker is free again when its
// receiver answers, not when the result is recorded. While the service is busy a
// record gathers results (busyGather, 100 ms); workers held until then kept 256 of
// them to about 1,400 deliveries a second to receivers answering in 50 ms. Here the
// gathering outlasts the test: a record can only come from a full batch, which eight
// workers make only if each answer frees its worker.
func TestDispatcherAnsweredAttemptsFreeTheirWorkers(t *testing.T) {
	rc := newReceiver(t, secret, time.Now, answerStatus(http.StatusOK))
	q := newMemQueue()
	wh := q.addWebhook(rc.URL, secret)
	for i := range webhook.MaxRecord {
		q.addEvent(time.Now(), fmt.Sprint("evt_", i), wh)
	}
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{AllowPrivate: true}),
		Encode: encodeEvent, Workers: 8, Poll: 5 * time.Millisecond,
		Busy: func() bool { return true }, BusyRate: 1_000_000,
	})
	webhook.SetBusyGather(d, time.Hour)
	run(t, d)
	waitFor(t, "a full record, before any gathering ends", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.batches) > 0
	})
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.batches[0] != webhook.MaxRecord {
		t.Fatalf("the first record wrote %d results, want a full one (%d)", q.batches[0], webhook.MaxRecord)
	}
}

// TestDispatcherPacedClaimsWaitForWorkers: while the service is busy, a claim waits
// for a pace's worth of free workers (here all eight), or for 100 ms after the last
// claim, rather than claiming for each answer: each claim is a write that takes the
// writer on SQLite. The receiver answers in 5 to 40 ms, so that the workers come
// free one by one, and a claim takes 3 ms, in which another answer comes.
func TestDispatcherPacedClaimsWaitForWorkers(t *testing.T) {
	var n atomic.Int64
	rc := newReceiver(t, secret, time.Now, func(_ int, w http.ResponseWriter, _ *http.Request) {
		time.Sleep(time.Duration(n.Add(1)%8+1) * 5 * time.Millisecond)
		w.WriteHeader(http.StatusOK)
	})
	q := newMemQueue()
	q.claimTime = 3 * time.Millisecond
	wh := q.addWebhook(rc.URL, secret)
	const events = 160
	for i := range events {
		q.addEvent(time.Now(), fmt.Sprint("evt_", i), wh)
	}
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{AllowPrivate: true}),
		Encode: encodeEvent, Workers: 8, Poll: 5 * time.Millisecond,
		Busy: func() bool { return true }, BusyRate: 1_000_000,
	})
	run(t, d)
	waitFor(t, "every delivery", func() bool {
		got, _ := rc.requests()
		return len(got) == events
	})
	q.mu.Lock()
	defer q.mu.Unlock()
	claims := 0
	for _, n := range q.taken {
		if n > 0 {
			claims++
		}
	}
	// Claims that followed the answers would take one or two deliveries each.
	perClaim := float64(events) / float64(claims)
	t.Logf("%d claims, %.1f deliveries each", claims, perClaim)
	if perClaim < 4 {
		t.Fatalf("%d claims took the %d deliveries, %.1f each, want at least 4 (half the workers): %v", claims, events, perClaim, q.taken)
	}
}

// TestDispatcherWindow: an endpoint is sent up to its window of deliveries at once,
// and no more; while the service is busy their results are recorded in batches.
// Answered attempts waiting for their record may hold leases beyond the window
// (ClaimOptions.Answered), never requests at the receiver.
func TestDispatcherWindow(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 100)
	var atReceiver, mostAtReceiver atomic.Int64
	rc := newReceiver(t, secret, time.Now, func(_ int, w http.ResponseWriter, r *http.Request) {
		n := atReceiver.Add(1)
		defer atReceiver.Add(-1)
		for m := mostAtReceiver.Load(); n > m && !mostAtReceiver.CompareAndSwap(m, n); m = mostAtReceiver.Load() {
		}
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	q := newMemQueue()
	wh := q.addWebhook(rc.URL, secret)
	var ids []int64
	for i := range 20 {
		ids = append(ids, q.addEvent(time.Now(), fmt.Sprint("evt_", i), wh)...)
	}
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{Timeout: time.Minute, AllowPrivate: true}),
		Encode: encodeEvent, Window: 4, Poll: 10 * time.Millisecond,
		Busy: func() bool { return true }, BusyRate: 1000,
	})
	run(t, d)
	for range 4 {
		<-arrived
	}
	// The pause only gives a dispatcher that sends past the window time to do so.
	time.Sleep(100 * time.Millisecond)
	if n := len(arrived); n != 0 {
		t.Fatalf("%d more attempts began with the window of 4 full", n)
	}
	close(release)
	waitFor(t, "every delivery", func() bool {
		for _, id := range ids {
			if got, _ := q.delivery(id); got.Status != petstore.DeliverySucceeded {
				return false
			}
		}
		return true
	})
	if n := mostAtReceiver.Load(); n > 4 {
		t.Fatalf("the receiver had %d deliveries at once with a window of 4", n)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.batches) >= len(ids) {
		t.Errorf("%d results were recorded in %d batches: none held more than one", len(ids), len(q.batches))
	}
}

// TestDispatcherPacesItselfWhileBusy: while the service serves requests, attempts
// begin at BusyRate a second at most (after the pace's burst); once it is idle, the
// rest go at once.
func TestDispatcherPacesItselfWhileBusy(t *testing.T) {
	rc := newReceiver(t, secret, time.Now, answerStatus(http.StatusOK))
	q := newMemQueue()
	var busy atomic.Bool
	busy.Store(true)
	const burst, events = 512, 600
	for i := range events {
		// A separate endpoint each, so that no window holds them back.
		q.addEvent(time.Now(), fmt.Sprint("evt_", i), q.addWebhook(rc.URL, secret))
	}
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{AllowPrivate: true}),
		Encode: encodeEvent, Poll: 10 * time.Millisecond, Busy: busy.Load, BusyRate: 10,
	})
	start := time.Now()
	run(t, d)
	time.Sleep(500 * time.Millisecond)
	got, _ := rc.requests()
	// An upper bound, which no machine's slowness can break.
	if limit := burst + int(10*time.Since(start).Seconds()) + 1; len(got) > limit {
		t.Fatalf("%d attempts while busy within %v, want at most %d", len(got), time.Since(start), limit)
	}
	busy.Store(false)
	d.Nudge()
	waitFor(t, "every delivery once idle", func() bool { got, _ := rc.requests(); return len(got) == events })
}

// TestDispatcherPacedClaimsGatherThePace: once the pace binds, a claim waits for
// 100 ms of it rather than claiming each token as it comes, since a claim's own cost
// (the endpoints read, the commit) would otherwise be paid per delivery or two.
func TestDispatcherPacedClaimsGatherThePace(t *testing.T) {
	rc := newReceiver(t, secret, time.Now, answerStatus(http.StatusOK))
	q := newMemQueue()
	const events, rate = 560, 100 // 100 a second: 10 per 100 ms, past the burst of 512
	for i := range events {
		q.addEvent(time.Now(), fmt.Sprint("evt_", i), q.addWebhook(rc.URL, secret))
	}
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{AllowPrivate: true}),
		Encode: encodeEvent, Poll: 10 * time.Millisecond, Busy: func() bool { return true }, BusyRate: rate,
		// Workers to spare, one for every delivery and 100 ms of the pace besides: a
		// claim is then bounded by the pace alone. With fewer, a claim made while
		// nearly every worker is busy may, after waiting 100 ms for more, take the few
		// that are free, as it should (CI caught this with 256 workers and with 560).
		Workers: events + rate/10,
	})
	run(t, d)
	waitFor(t, "every delivery, the last 48 past the burst", func() bool {
		got, _ := rc.requests()
		return len(got) == events
	})
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, m := range q.maxes {
		if m < rate/10 {
			t.Fatalf("claim %d of %d asked for %d deliveries, want at least %d (100 ms of the pace); claims: %v", i+1, len(q.maxes), m, rate/10, q.maxes)
		}
	}
}

// TestDispatcherFinishErrors: an attempt whose result cannot be recorded is made
// again once its lease runs out (at least once), and counted once.
func TestDispatcherFinishErrors(t *testing.T) {
	clock := &testClock{t: now}
	rc := newReceiver(t, secret, clock.Now, answerStatus(http.StatusOK))
	q := newMemQueue()
	ids := q.addEvent(now, "evt_1", q.addWebhook(rc.URL, secret))
	q.finishErrs = 1
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{Timeout: 10 * time.Second, AllowPrivate: true}),
		Encode: encodeEvent, Now: clock.Now, Poll: time.Hour, Lease: time.Minute,
	})
	run(t, d)
	waitFor(t, "the first attempt", func() bool { got, _ := rc.requests(); return len(got) == 1 })
	// Its result is lost: the worker's nudge finds it still leased.
	waitFor(t, "the claim after the lost result", func() bool { return q.claimCount() >= 2 })
	if got, leased := q.delivery(ids[0]); got.Attempts != 0 || !leased {
		t.Fatalf("after a lost result: %d attempts, leased %v", got.Attempts, leased)
	}
	clock.Set(now.Add(time.Minute))
	d.Nudge()
	waitFor(t, "the delivery", func() bool { got, _ := q.delivery(ids[0]); return got.Status == petstore.DeliverySucceeded })
	if got, _ := rc.requests(); !slices.Equal(got, []string{"evt_1", "evt_1"}) {
		t.Fatalf("the receiver got %q, want evt_1 twice", got)
	}
	if got, _ := q.delivery(ids[0]); got.Attempts != 1 {
		t.Fatalf("%d attempts recorded, want 1", got.Attempts)
	}
}

// TestDispatcherEndpointDeletedMidAttempt: an endpoint deleted during an attempt
// takes its delivery with it; the store leaves its result out, which is no error.
func TestDispatcherEndpointDeletedMidAttempt(t *testing.T) {
	q := newMemQueue()
	var wh int64
	rc := newReceiver(t, secret, time.Now, func(_ int, w http.ResponseWriter, _ *http.Request) {
		q.deleteWebhook(wh)
		w.WriteHeader(http.StatusOK)
	})
	wh = q.addWebhook(rc.URL, secret)
	q.addEvent(time.Now(), "evt_1", wh)
	var logs lockedBuffer
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{AllowPrivate: true}),
		Encode: encodeEvent, Poll: time.Hour,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	run(t, d)
	waitFor(t, "the attempt to be recorded", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.batches) > 0
	})
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("an error was logged:\n%s", logs.String())
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if n := len(q.results); n != 0 {
		t.Fatalf("%d results recorded for a delivery that is gone", n)
	}
}

// lockedBuffer collects the log of the dispatcher's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// ipInText finds an IPv4 or IPv6 address (or a range) in a text.
var ipInText = regexp.MustCompile(`\d+\.\d+\.\d+\.\d+|\[?[0-9a-f]*::[0-9a-f:]*\]?|/\d+\b`)

// TestDispatcherAttemptErrors: what an attempt's error says, the status it records,
// and that only the endpoint's failures count towards disabling it.
func TestDispatcherAttemptErrors(t *testing.T) {
	answers := newReceiver(t, secret, time.Now, func(_ int, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/500":
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte("  database\r\n\tis down\x00 "))
		case "/long":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(strings.Repeat("é", 200)))
		case "/binary":
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte{0xff, 0xfe, 0x00, 0x01})
		case "/redirect":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := "http://" + l.Addr().String() + "/"
	l.Close()
	local := webhook.NewSender(webhook.SenderOptions{AllowPrivate: true})
	strict := webhook.NewSender(webhook.SenderOptions{})
	// public takes the loopback receiver for a public one: what an endpoint on the
	// internet gets told.
	public := webhook.NewSender(webhook.SenderOptions{AllowPrivate: true})
	webhook.TreatAsPublic(public)
	// own has the receiver for one of the service's own listeners.
	own := webhook.NewSender(webhook.SenderOptions{AllowPrivate: true})
	own.RefuseOwn(answers.Listener.Addr())
	_, answersPort, _ := net.SplitHostPort(answers.Listener.Addr().String())
	failingEncode := func(petstore.Event) ([]byte, error) { return nil, errors.New("no JSON for you") }
	tests := []struct {
		name        string
		sender      *webhook.Sender
		encode      func(petstore.Event) ([]byte, error)
		url         string
		status      int
		want        string
		notEndpoint bool // the failure is the service's, not the endpoint's
	}{
		{"a public receiver's 500 quotes its answer on one line", public, nil, answers.URL + "/500", 500, "the endpoint answered 500: database is down", false},
		{"a public receiver's long answer is cut", public, nil, answers.URL + "/long", 400, "the endpoint answered 400: " + strings.Repeat("é", 120) + "…", false},
		{"an answer that is not text is not quoted", public, nil, answers.URL + "/binary", 502, "the endpoint answered 502", false},
		{"a 404 without a body", public, nil, answers.URL + "/missing", 404, "the endpoint answered 404", false},
		{"a private receiver's answer is not quoted", local, nil, answers.URL + "/500", 500, "the endpoint answered 500", false},
		{"a redirect", local, nil, answers.URL + "/redirect", 302, "the endpoint answered 302, a redirect, which is not followed", false},
		// A closed port and a name that does not exist read alike: whether an internal
		// name exists is not for the API to tell.
		{"a closed port", local, nil, closedPort, 0, "the endpoint could not be reached", false},
		{"a name that does not exist", local, nil, "http://no-such-host.invalid/", 0, "the endpoint could not be reached", false},
		{"a loopback address not allowed", strict, nil, "https://127.0.0.1:1/", 0, "refused: the endpoint URL must not be a private, loopback or link-local address (private and loopback addresses need the server's --webhooks-allow-private)", false},
		// Found at the dial: the address and the range that refused it go to the log.
		{"a name that resolves to loopback", strict, nil, "https://localhost:1/", 0, "the endpoint could not be reached", false},
		{"the service's own listener, by name", own, nil, "http://localhost:" + answersPort + "/500", 0, "the endpoint could not be reached", false},
		{"the service's own listener, by address", own, nil, answers.URL + "/500", 0, "refused: the endpoint URL must not be an address of this service or of its deployment (the server's --webhooks-deny)", false},
		{"an event that cannot be encoded", local, failingEncode, answers.URL + "/500", 0, "the event could not be encoded (see the service's log)", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &testClock{t: now}
			q := newMemQueue()
			ids := q.addEvent(now, "evt_1", q.addWebhook(tt.url, secret))
			// An attempt that was made is logged; an event that could not be encoded
			// was never sent.
			attempted := tt.encode == nil
			if tt.encode == nil {
				tt.encode = encodeEvent
			}
			var logs lockedBuffer
			d := webhook.NewDispatcher(webhook.DispatcherOptions{Queue: q, Sender: tt.sender, Encode: tt.encode, Now: clock.Now, Poll: time.Hour,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			run(t, d)
			waitFor(t, "the attempt", func() bool { got, _ := q.delivery(ids[0]); return got.Attempts == 1 })
			got, _ := q.delivery(ids[0])
			if got.Status != petstore.DeliveryPending || got.ResponseStatus != tt.status || got.LastError != tt.want {
				t.Fatalf("%s, status %d, error %q; want pending, %d, %q", got.Status, got.ResponseStatus, got.LastError, tt.status, tt.want)
			}
			if addr := ipInText.FindString(got.LastError); addr != "" {
				t.Errorf("the error tells an address: %q", got.LastError)
			}
			if attempted && !strings.Contains(logs.String(), "webhook delivery attempt failed") {
				t.Errorf("the attempt's details are not in the log:\n%s", logs.String())
			}
			if strings.Contains(logs.String(), tt.url) {
				t.Errorf("the log holds the endpoint's URL, whose query may be a secret:\n%s", logs.String())
			}
			r := q.result(0)
			if want := now.Add(-webhook.DefaultDisableAfter); tt.notEndpoint && !r.DisableIfFailingBefore.IsZero() || !tt.notEndpoint && !r.DisableIfFailingBefore.Equal(want) {
				t.Fatalf("DisableIfFailingBefore = %v", r.DisableIfFailingBefore)
			}
		})
	}
}

// TestDispatcherMetrics: deliveries by outcome, and the queue's depth and age from
// QueueStats, which a scrape leaves out when the queue cannot be counted.
func TestDispatcherMetrics(t *testing.T) {
	clock := &testClock{t: now}
	ok := newReceiver(t, secret, clock.Now, answerStatus(http.StatusOK))
	failing := newReceiver(t, secret, clock.Now, answerStatus(http.StatusInternalServerError))
	q := newMemQueue()
	q.addEvent(now, "evt_ok", q.addWebhook(ok.URL, secret))
	q.addEvent(now.Add(-time.Minute), "evt_retried", q.addWebhook(failing.URL, secret))
	// A delivery whose first attempt was 72 hours ago fails at its next failure.
	failed := q.addEventRetrying(now, now.Add(-72*time.Hour), "evt_failed", q.addWebhook(failing.URL+"/other", secret))
	q.deliveries[failed[0]-1].Attempts = 1
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: q, Sender: webhook.NewSender(webhook.SenderOptions{AllowPrivate: true}),
		Encode: encodeEvent, Now: clock.Now, Poll: time.Hour,
	})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(d)
	before := `
# HELP petstore_webhook_deliveries_total Webhook delivery attempts by outcome: succeeded (2xx), retried (failed, tried again later) or failed (failed, no more retries).
# TYPE petstore_webhook_deliveries_total counter
petstore_webhook_deliveries_total{outcome="failed"} 0
petstore_webhook_deliveries_total{outcome="retried"} 0
petstore_webhook_deliveries_total{outcome="succeeded"} 0
# HELP petstore_webhook_oldest_pending_seconds Age of the event of the oldest pending webhook delivery; 0 when none is pending.
# TYPE petstore_webhook_oldest_pending_seconds gauge
petstore_webhook_oldest_pending_seconds 60
# HELP petstore_webhook_queue_depth Webhook deliveries pending (in flight or waiting for a retry) and events not yet sent to an enabled endpoint.
# TYPE petstore_webhook_queue_depth gauge
petstore_webhook_queue_depth 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(before)); err != nil {
		t.Fatal(err)
	}
	run(t, d)
	waitFor(t, "three attempts", func() bool {
		for id, want := range map[int64]int{1: 1, 2: 1, 3: 2} {
			if got, _ := q.delivery(id); got.Attempts != want {
				return false
			}
		}
		return true
	})
	clock.Set(now.Add(30 * time.Second))
	after := strings.NewReplacer(
		`outcome="failed"} 0`, `outcome="failed"} 1`,
		`outcome="retried"} 0`, `outcome="retried"} 1`,
		`outcome="succeeded"} 0`, `outcome="succeeded"} 1`,
		"petstore_webhook_oldest_pending_seconds 60", "petstore_webhook_oldest_pending_seconds 90",
		"petstore_webhook_queue_depth 3", "petstore_webhook_queue_depth 1",
	).Replace(before)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(after)); err != nil {
		t.Fatal(err)
	}
	q.mu.Lock()
	q.statsErr = errors.New("memQueue: the database is unavailable")
	q.mu.Unlock()
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 3 {
		t.Fatalf("with the queue failing, a scrape gave %d metrics (%v), want the 3 counters", n, err)
	}
}
