package webhook

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The Dispatcher's claim loop: Run, which claims the deliveries due and starts their
// attempts, and its shutdown.

// claimTimeout bounds a claim: one that hangs (a plan gone bad, a lock) is then an
// error in the log, not silence, and on PostgreSQL the cancelled connection is
// dropped, so that the next claim is planned afresh.
const claimTimeout = 10 * time.Second

// maxRecord bounds the results one transaction records, and maxClaim the deliveries
// one claim takes: a claim takes the writer on SQLite, so it stays short, and a full
// one is followed by another at once.
const (
	maxRecord = 512
	maxClaim  = 512
)

// Claims that are woken by nudges are spaced by idleSpacing, or busySpacing while
// the service serves requests: each is a write transaction, which on SQLite takes
// the one writer (and its fsync) from the orders' batches. An event is sent at most
// that much later for it (or busyGather, when the pace binds). Results gather for
// d.gathering() before their record.
const (
	idleSpacing = 0
	busySpacing = 20 * time.Millisecond
)

// spacing is the time between claims woken by nudges.
func (d *Dispatcher) spacing() time.Duration {
	if d.busy != nil && d.busy() {
		return busySpacing
	}
	return idleSpacing
}

// Run delivers until ctx is done, then stops claiming, lets the attempts in flight
// end within the grace, records them, and returns nil. A queue that fails is logged
// and tried again after the poll interval. One Dispatcher runs once at a time; other
// processes run their own on the same queue.
//
// Claims and records are batched, as orders are: a claim takes every delivery due
// that the free workers and the endpoints' windows allow, and a recorder writes the
// results of every attempt that ended while it wrote the previous ones, in one
// transaction; then it nudges the loop to claim what those freed.
func (d *Dispatcher) Run(ctx context.Context) error {
	if !d.running.CompareAndSwap(false, true) {
		return errors.New("webhook: the dispatcher is already running")
	}
	defer d.running.Store(false)

	// Attempts outlive ctx by the grace: a delivery half made when the process is
	// asked to stop is finished and recorded rather than made again by another run.
	work, cutOff := context.WithCancel(context.WithoutCancel(ctx))
	defer cutOff()
	r := &run{d: d, work: work, results: make(chan finished, d.workers+maxUnrecorded), freed: make(chan struct{}, 1), answered: map[int64]int{}}
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		d.record(r)
	}()
	r.claimLoop(ctx)
	r.shutDown(cutOff)
	close(r.results)
	<-recorded
	return nil
}

// run is the state of one Run: its attempts in flight and the results they send to
// the recorder.
type run struct {
	d *Dispatcher
	// work is the attempts' context, which outlives Run's by the grace.
	work context.Context
	wg   sync.WaitGroup
	// inFlight counts the deliveries claimed and not yet recorded: their leases hold
	// until then. attempting counts those of them whose attempt has not ended: each
	// holds a worker (a goroutine and a connection).
	inFlight   atomic.Int64
	attempting atomic.Int64
	// lastPaced is when the claim loop last claimed under the pace (pace).
	lastPaced time.Time
	results   chan finished
	// answered counts, by endpoint, the attempts that have ended and wait for their
	// record (petstore.ClaimOptions.Answered): a claim gives their places in the
	// window to new deliveries. answeredMu guards it.
	answeredMu sync.Mutex
	answered   map[int64]int
	// queueMu keeps a claim and a record apart, so that an answered attempt counted
	// by a claim is not recorded while the claim reads the leases (which would free
	// its place twice).
	queueMu sync.Mutex
	// freed is the recorder's word that it recorded results, which freed their
	// places in their endpoints' windows and under maxUnrecorded: the loop claims at
	// once, without the spacing, since the record was spaced already.
	freed chan struct{}
}

// answer counts an attempt that ended and waits for its record.
func (r *run) answer(webhookID int64) {
	r.answeredMu.Lock()
	r.answered[webhookID]++
	r.answeredMu.Unlock()
}

// recorded uncounts the attempts of batch, recorded now.
func (r *run) recorded(batch []finished) {
	r.answeredMu.Lock()
	defer r.answeredMu.Unlock()
	for _, f := range batch {
		id := f.job.Webhook.ID
		if r.answered[id]--; r.answered[id] <= 0 {
			delete(r.answered, id)
		}
	}
}

// answeredNow is a copy of answered, for a claim.
func (r *run) answeredNow() map[int64]int {
	r.answeredMu.Lock()
	defer r.answeredMu.Unlock()
	if len(r.answered) == 0 {
		return nil
	}
	return maps.Clone(r.answered)
}

// signalFreed tells the claim loop that a record freed places in the windows and
// under maxUnrecorded; it never blocks, and frees that come while one is waiting are
// one.
func (r *run) signalFreed() {
	select {
	case r.freed <- struct{}{}:
	default:
	}
}

// maxUnrecorded bounds the deliveries whose attempt ended and whose result waits for
// its record, beyond the workers. Such a delivery holds its lease but no worker: a
// worker is free again as soon as its receiver answers, not after the record, which
// gathers busyGather while the service is busy. Counted against the workers, the
// answers waiting held 256 workers to about 1,480 deliveries a second to receivers
// answering in 50 ms (docs/PERFORMANCE.md, 2026-11-28, third day). The bound keeps
// answers that come faster than the records write them from letting claims (and
// leases that may run out before their record) pile up.
const maxUnrecorded = maxRecord

// free is how many deliveries a claim may take now: the workers not attempting, within
// the bound on those claimed and not yet recorded.
func (r *run) free() int {
	return min(r.d.workers-int(r.attempting.Load()), r.d.workers+maxUnrecorded-int(r.inFlight.Load()))
}

// claimLoop claims and starts the deliveries due until ctx is done.
func (r *run) claimLoop(ctx context.Context) {
	d := r.d
	for ctx.Err() == nil {
		free := r.free()
		if free > 0 && d.busy != nil && d.busy() {
			if free = r.pace(ctx, free); free < 1 {
				continue
			}
		}
		if free > 0 {
			full, err := r.claim(ctx, free)
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				d.log.Error("webhook deliveries: claim", "err", err)
				// Only the poll interval, not a nudge, ends this wait: nudges come
				// with every event and every attempt, and would make a queue that
				// fails a busy loop.
				if !sleep(ctx, d.poll) {
					break
				}
				continue
			}
			if full {
				// A full batch: more may be due.
				continue
			}
		}
		if !r.wait(ctx) {
			break
		}
	}
}

// busyGather is how much of the pace a paced claim waits for at least: a claim's
// cost is mostly its own (the endpoints read, the cursors moved, the commit), so
// 40 deliveries a claim, what 20 ms of the pace gave, cost the orders twice what
// 200 do (docs/PERFORMANCE.md, 2026-11-28). A paced delivery may begin this much
// later; a pace that does not bind (tokens to spare) waits for nothing.
const busyGather = 100 * time.Millisecond

// workerPoll is how often a paced claim that waits for workers looks at them again.
const workerPoll = 10 * time.Millisecond

// pace returns how many of the free workers the pace allows to start now, while the
// service is busy. A paced claim waits for busyGather's worth of the pace (tokens)
// and of free workers (or all of them, when they are fewer): a worker is free when
// its receiver answers, so without the wait the claims would follow the answers, a
// few deliveries each, and each claim takes the writer on SQLite. It waits for
// workers no longer than busyGather after the last paced claim; then the free ones
// go. While it waits (without claiming) it returns 0.
func (r *run) pace(ctx context.Context, free int) int {
	d := r.d
	limit := float64(d.paced.Limit())
	want := min(d.workers, max(1, int(limit*d.gather.Seconds())))
	if free < want {
		if left := d.gather - time.Since(r.lastPaced); left > 0 {
			sleep(ctx, min(left, workerPoll))
			return 0
		}
		want = free
	}
	tokens := d.paced.Tokens()
	if tokens < float64(want) {
		sleep(ctx, time.Duration((float64(want)-tokens)/limit*float64(time.Second))+time.Millisecond)
		return 0
	}
	r.lastPaced = time.Now()
	return min(free, int(tokens))
}

// claim claims up to free deliveries (at most maxClaim) and starts their attempts;
// it reports whether the claim was full (maxClaim), so that more may be due. A claim
// bounded by the free workers is not: the loop waits for more to be free (a record,
// a nudge, the pace) rather than claim again for each answer.
func (r *run) claim(ctx context.Context, free int) (full bool, err error) {
	d := r.d
	free = min(free, maxClaim)
	cctx, cancel := context.WithTimeout(ctx, claimTimeout)
	r.queueMu.Lock()
	jobs, err := d.queue.ClaimDeliveries(cctx, petstore.ClaimOptions{Now: d.now(), Lease: d.lease, Max: free, Window: d.window,
		Answered: r.answeredNow()})
	r.queueMu.Unlock()
	cancel()
	if err != nil {
		return false, err
	}
	r.inFlight.Add(int64(len(jobs)))
	r.attempting.Add(int64(len(jobs)))
	// Attempts made while idle are counted too, so that a busy spell starts with
	// what is left of the pace's burst.
	d.paced.AllowN(time.Now(), len(jobs))
	for _, job := range jobs {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			f, ok := d.attempt(r.work, job)
			r.attempting.Add(-1)
			if ok {
				r.answer(job.Webhook.ID)
				r.results <- f
				return
			}
			r.inFlight.Add(-1)
			d.Nudge()
		}()
	}
	return len(jobs) == maxClaim, nil
}

// wait waits for work (a nudge, the poll), then for the spacing, or for the places
// that a record freed, which it does not space; it reports whether ctx is still
// live.
func (r *run) wait(ctx context.Context) bool {
	d := r.d
	t := time.NewTimer(d.poll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-r.freed:
		// The record was spaced, and its deliveries' windows are free now: a
		// delivery to a receiver that answers in 50 ms would otherwise hold its
		// place in the window for the spacing after its record too, and an
		// endpoint's pace would fall by a third (docs/PERFORMANCE.md, 2026-11-27).
		return true
	case <-d.wake:
	case <-t.C:
	}
	// Every commit of an event nudges: under a flood of orders, claims would take
	// the writer (SQLite) as often as the orders' batches do. They come at most
	// every d.spacing() instead; a full claim is followed at once (claimLoop).
	if wait := d.spacing(); wait > 0 && !sleep(ctx, wait) {
		return false
	}
	return true
}

// shutDown waits for the attempts in flight, for the grace at most; then it cuts
// off those left, with cutOff, and waits for them to end.
func (r *run) shutDown(cutOff context.CancelFunc) {
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	t := time.NewTimer(r.d.grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		n := r.attempting.Load()
		r.d.log.Warn("webhook deliveries: attempts cut off at shutdown; they are tried again when their leases run out", "attempts", n, "lease", r.d.lease)
		cutOff()
		<-done
	}
}

// sleep waits for d or ctx; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
