package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/webhook"
)

// memQueue is an in-memory webhook.Queue with the semantics petstore.WebhookStore
// documents: a claim leases due deliveries that are not leased, at most the window per
// endpoint in flight; FinishAttempts counts each attempt, ends its lease, keeps the
// endpoint's FailingSince and disables it past DisableIfFailingBefore, failing its
// pending deliveries. Its deliveries are made when their events are (it has no
// fan-out to model).
type memQueue struct {
	mu         sync.Mutex
	webhooks   map[int64]*petstore.Webhook
	deliveries []*memDelivery // by id
	results    []petstore.AttemptResult
	claims     int
	claimErrs  int           // how many of the next claims fail
	finishErrs int           // how many of the next FinishAttempts fail
	statsErr   error         // what QueueStats answers, when set
	batches    []int         // the sizes of the FinishAttempts batches
	maxes      []int         // the Max of each claim
	taken      []int         // how many deliveries each claim took
	claimTime  time.Duration // how long each claim takes, as a write on SQLite does
}

type memDelivery struct {
	petstore.Delivery
	event       petstore.Event
	retrySince  time.Time
	leasedUntil time.Time // zero when not leased
}

var _ webhook.Queue = (*memQueue)(nil)

func newMemQueue() *memQueue { return &memQueue{webhooks: map[int64]*petstore.Webhook{}} }

// addWebhook adds an enabled endpoint and returns its id.
func (q *memQueue) addWebhook(url, secret string) int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	id := int64(len(q.webhooks) + 1)
	q.webhooks[id] = &petstore.Webhook{ID: id, URL: url, Secret: secret, Events: petstore.MaskAll, Enabled: true}
	return id
}

// addEvent writes an event created at at, with a pending delivery, due at once, to
// each endpoint; it returns the deliveries' ids.
func (q *memQueue) addEvent(at time.Time, id string, webhooks ...int64) []int64 {
	return q.addEventRetrying(at, at, id, webhooks...)
}

// addEventRetrying is addEvent for deliveries whose run of retries began at since.
func (q *memQueue) addEventRetrying(at, since time.Time, id string, webhooks ...int64) []int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	ev := petstore.Event{ID: id, Type: petstore.OrderPlaced, CreatedAt: at}
	var ids []int64
	for _, w := range webhooks {
		due := at
		d := &memDelivery{
			Delivery: petstore.Delivery{
				ID: int64(len(q.deliveries) + 1), WebhookID: w, EventID: id, EventType: ev.Type,
				Status: petstore.DeliveryPending, NextAttemptAt: &due, CreatedAt: at,
			},
			event: ev, retrySince: since,
		}
		q.deliveries = append(q.deliveries, d)
		ids = append(ids, d.ID)
	}
	return ids
}

func (q *memQueue) ClaimDeliveries(ctx context.Context, o petstore.ClaimOptions) ([]petstore.DeliveryJob, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	time.Sleep(q.claimTime)
	q.claims++
	q.maxes = append(q.maxes, o.Max)
	if q.claimErrs > 0 {
		q.claimErrs--
		return nil, errors.New("memQueue: the database is unavailable")
	}
	now := o.Now
	inFlight := map[int64]int{}
	for _, d := range q.deliveries {
		if d.Status == petstore.DeliveryPending && d.leasedUntil.After(now) {
			inFlight[d.WebhookID]++
		}
	}
	// As the stores do (petstore.Claim): answered attempts keep their leases but
	// not their places in the window.
	for id, n := range o.Answered {
		inFlight[id] = max(inFlight[id]-n, 0)
	}
	var jobs []petstore.DeliveryJob
	for _, d := range q.deliveries {
		if len(jobs) == o.Max {
			break
		}
		if d.Status != petstore.DeliveryPending || d.leasedUntil.After(now) || d.NextAttemptAt.After(now) ||
			inFlight[d.WebhookID] >= o.Window {
			continue
		}
		inFlight[d.WebhookID]++
		d.leasedUntil = now.Add(o.Lease)
		jobs = append(jobs, petstore.DeliveryJob{Delivery: d.Delivery, Event: d.event, Webhook: *q.webhooks[d.WebhookID], RetrySince: d.retrySince})
	}
	q.taken = append(q.taken, len(jobs))
	return jobs, nil
}

func (q *memQueue) FinishAttempts(ctx context.Context, rs []petstore.AttemptResult) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.finishErrs > 0 {
		q.finishErrs--
		return errors.New("memQueue: the database is unavailable")
	}
	q.batches = append(q.batches, len(rs))
	for _, r := range rs {
		d := q.find(r.DeliveryID)
		if d == nil || d.Status != petstore.DeliveryPending {
			continue // deleted with its endpoint, or failed by its disabling
		}
		if d.leasedUntil.IsZero() || d.WebhookID != r.WebhookID {
			return fmt.Errorf("memQueue: delivery %d of endpoint %d is not leased", r.DeliveryID, r.WebhookID)
		}
		q.results = append(q.results, r)
		at := r.At
		d.leasedUntil = time.Time{}
		if d.Attempts == 0 {
			d.retrySince = r.At // the run's first attempt starts its horizon
		}
		d.Attempts++
		d.Status, d.LastAttemptAt, d.ResponseStatus, d.LastError = r.Status, &at, r.ResponseStatus, r.Error
		d.NextAttemptAt = nil
		if r.Status == petstore.DeliveryPending {
			next := r.NextAttemptAt
			d.NextAttemptAt = &next
		}
		w := q.webhooks[d.WebhookID]
		if r.Status == petstore.DeliverySucceeded {
			w.FailingSince = nil
			continue
		}
		if w.FailingSince == nil {
			w.FailingSince = &at
		}
		if !r.DisableIfFailingBefore.IsZero() && w.FailingSince.Before(r.DisableIfFailingBefore) {
			w.Enabled, w.DisabledReason = false, "failing since "+w.FailingSince.Format(time.RFC3339)
			for _, o := range q.deliveries {
				if o.WebhookID == w.ID && o.Status == petstore.DeliveryPending {
					o.Status, o.NextAttemptAt = petstore.DeliveryFailed, nil
				}
			}
		}
	}
	return nil
}

func (q *memQueue) QueueStats(ctx context.Context) (petstore.QueueStats, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.statsErr != nil {
		return petstore.QueueStats{}, q.statsErr
	}
	var st petstore.QueueStats
	for _, d := range q.deliveries {
		if d.Status == petstore.DeliveryPending {
			st.Pending++
			if st.Oldest.IsZero() || d.event.CreatedAt.Before(st.Oldest) {
				st.Oldest = d.event.CreatedAt
			}
		}
	}
	return st, nil
}

// deleteWebhook removes an endpoint and its deliveries, leased ones included.
func (q *memQueue) deleteWebhook(id int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.webhooks, id)
	q.deliveries = slices.DeleteFunc(q.deliveries, func(d *memDelivery) bool { return d.WebhookID == id })
}

func (q *memQueue) find(id int64) *memDelivery {
	for _, d := range q.deliveries {
		if d.ID == id {
			return d
		}
	}
	return nil
}

// delivery returns a copy of delivery id and whether it is leased.
func (q *memQueue) delivery(id int64) (petstore.Delivery, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	d := q.find(id)
	return d.Delivery, !d.leasedUntil.IsZero()
}

func (q *memQueue) webhook(id int64) petstore.Webhook {
	q.mu.Lock()
	defer q.mu.Unlock()
	return *q.webhooks[id]
}

func (q *memQueue) result(i int) petstore.AttemptResult {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.results[i]
}

func (q *memQueue) claimCount() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.claims
}

// testClock is a clock the test sets.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// encodeEvent is the tests' Encode: enough of the event for a receiver to tell which
// it is.
func encodeEvent(e petstore.Event) ([]byte, error) {
	return json.Marshal(map[string]any{"id": e.ID, "type": e.Type, "createdAt": e.CreatedAt})
}

// receiver is an endpoint that checks every delivery's signature and remembers the
// event ids it was sent, in order; answer decides each answer, given the number of
// the request (0 for the first).
type receiver struct {
	*httptest.Server
	secret string
	now    func() time.Time

	mu     sync.Mutex
	got    []string
	forged []string
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

func newReceiver(t *testing.T, secret string, now func() time.Time, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{secret: secret, now: now, answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ev struct{ ID string }
	_ = json.Unmarshal(body, &ev)
	rc.mu.Lock()
	n := len(rc.got)
	rc.got = append(rc.got, r.Header.Get(webhook.EventIDHeader))
	err := webhook.Verify(r.Header.Get(webhook.SignatureHeader), body, []byte(rc.secret), rc.now(), webhook.DefaultTolerance)
	if err != nil || ev.ID != r.Header.Get(webhook.EventIDHeader) {
		rc.forged = append(rc.forged, fmt.Sprintf("%s: %v (body id %q)", r.Header.Get(webhook.EventIDHeader), err, ev.ID))
	}
	rc.mu.Unlock()
	rc.answer(n, w, r)
}

// requests returns the event ids of the requests so far and the failures of their
// signatures.
func (rc *receiver) requests() (got, forged []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.got...), append([]string(nil), rc.forged...)
}

func answerStatus(code int) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// waitFor polls cond until it holds, failing the test after a deadline generous
// enough for a loaded machine.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// run starts d and returns a stop that cancels it and waits for Run to return; the
// test's cleanup stops it too.
func run(t *testing.T, d *webhook.Dispatcher) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run returned %v", err)
				}
			case <-time.After(60 * time.Second):
				t.Error("Run did not return a minute after its context was cancelled")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
