package webhook

import (
	"context"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The recorder: the results of the attempts, written in batches.

// finishTimeout bounds the recording of an attempt's result, which goes on after
// Run's context is done so that a delivery made is not delivered again.
const finishTimeout = 10 * time.Second

// finished is an attempt made, waiting to be recorded.
type finished struct {
	job     petstore.DeliveryJob
	result  petstore.AttemptResult
	outcome string
}

// record writes the results of attempts until results is closed: it takes one, and
// every other one waiting or arriving within d.gathering() (up to maxRecord), records
// them in one transaction, frees their places in the windows and under
// maxUnrecorded, and tells the claim loop (r.signalFreed).
func (d *Dispatcher) record(r *run) {
	results := r.results
	batch := make([]finished, 0, maxRecord)
	rs := make([]petstore.AttemptResult, 0, maxRecord)
	for f := range results {
		batch = append(batch[:0], f)
		// Idle, the results already waiting go together; busy, those that come
		// within the spacing too.
		gathering := time.NewTimer(d.gathering())
	gather:
		for len(batch) < maxRecord {
			select {
			case f, ok := <-results:
				if !ok {
					break gather
				}
				batch = append(batch, f)
				continue
			default:
			}
			select {
			case f, ok := <-results:
				if !ok {
					break gather
				}
				batch = append(batch, f)
			case <-gathering.C:
				break gather
			}
		}
		gathering.Stop()
		rs = rs[:0]
		for _, f := range batch {
			rs = append(rs, f.result)
		}
		// Recorded whatever became of Run's context, but within its own bound: a
		// delivery made and not recorded is made again.
		ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
		r.queueMu.Lock()
		err := d.queue.FinishAttempts(ctx, rs)
		// Recorded or not, they are no longer answers waiting: a failed record
		// leaves their leases to run out, and they count as in flight until then.
		r.recorded(batch)
		r.queueMu.Unlock()
		cancel()
		if err != nil {
			d.log.Error("webhook deliveries: record attempts; they are tried again when their leases run out", "err", err, "attempts", len(batch))
		} else {
			for _, f := range batch {
				d.recorded(f)
			}
		}
		r.inFlight.Add(-int64(len(batch)))
		r.signalFreed()
	}
}

// gathering is how long the results of attempts gather before they are recorded:
// none while idle; while busy, as long as a paced claim gathers (busyGather), so that
// a record, like a claim, is one transaction per 100 ms of the pace, not one per 20
// ms. An answered attempt has left its worker and its place in the window already
// (run.answer), so the wait holds back no delivery (unless maxUnrecorded answers
// wait), only the end of its lease, and a crash within it makes those deliveries
// again (at least once).
func (d *Dispatcher) gathering() time.Duration {
	if d.busy != nil && d.busy() {
		return d.gather
	}
	return idleSpacing
}

// recorded counts and logs an attempt once it is recorded.
func (d *Dispatcher) recorded(f finished) {
	d.byOutcome[f.outcome].Inc()
	if f.outcome == outcomeSucceeded {
		return
	}
	log := d.log.With("delivery", f.job.Delivery.ID, "webhook", f.job.Webhook.ID, "event", f.job.Event.ID)
	switch f.outcome {
	case outcomeFailed:
		log.Warn("webhook delivery failed, no more retries", "attempts", f.job.Delivery.Attempts+1, "error", f.result.Error)
	case outcomeRetried:
		log.Debug("webhook delivery failed, retried later", "attempts", f.job.Delivery.Attempts+1, "next", f.result.NextAttemptAt, "error", f.result.Error)
	}
}
