package petstore

import (
	"maps"
	"slices"
	"time"
)

// A finish of attempts is planned the way a claim is (PlanClaim): the store loads, in
// one transaction, the endpoints of a batch of results and their deliveries still
// pending; PlanFinish decides what each result writes; the store writes it.

// DeliveryKey names a delivery: its endpoint and its id.
type DeliveryKey struct{ WebhookID, DeliveryID int64 }

// PendingAttempt is a pending delivery's row as a finish loads it.
type PendingAttempt struct {
	Attempts int
	// Fanned says that a claim made the row for an event after the cursor, and no
	// retry by hand made it pending since: a test event's row is not, nor one that a
	// retry by hand made or made pending again (its span may tell of it as failed,
	// by the endpoint's disabling, so a success must keep the row).
	Fanned bool
}

// FinishEndpoint is an endpoint as a finish loads it.
type FinishEndpoint struct {
	Window       int
	FailingSince *time.Time
	Enabled      bool
	Events       EventMask
}

// AttemptRecord is an attempt recorded on its delivery's row: its status, the next
// attempt (pending only; nil otherwise) and what the endpoint answered.
type AttemptRecord struct {
	Key            DeliveryKey
	Status         DeliveryStatus
	At             time.Time
	NextAttemptAt  *time.Time
	ResponseStatus int
	Error          string
}

// EndpointRun is an endpoint's window and run of failures after a finish.
type EndpointRun struct {
	WebhookID    int64
	Window       int
	FailingSince *time.Time
}

// Disabling disables an endpoint at At, for Reason, and fails its pending
// deliveries and the events not yet sent to it (Events is its subscription, which
// the failed span keeps), with FailedByDisabling(Reason).
type Disabling struct {
	WebhookID int64
	Reason    string
	At        time.Time
	Events    EventMask
}

// FinishPlan is what a batch of attempt results writes, in this order: the rows
// forgotten, the attempts recorded, the endpoints' runs, the disablings.
type FinishPlan struct {
	// Forget lists the rows of fan-outs whose first attempt succeeded: the spans
	// tell of them.
	Forget   []DeliveryKey
	Record   []AttemptRecord
	Runs     []EndpointRun
	Disables []Disabling
}

// PlanFinish decides what the results of attempts write. pending holds the rows of
// the results' deliveries that are pending (a delivery missing from it was deleted
// with its endpoint, or failed by its disabling: its result is left out), and
// endpoints the results' endpoints (a missing one was deleted). A result counts
// once: a second for the same delivery in the batch is left out.
//
// A success at a fan-out's first attempt forgets the row; any other result is
// recorded. Each endpoint's run of failures and window then follow its results
// (RunAfter); one whose run began before a result's DisableIfFailingBefore is
// disabled, unless it is disabled already (an admin disabled it, then sent it a
// test event): its reason would say the service disabled it, which it did not.
func PlanFinish(results []AttemptResult, pending map[DeliveryKey]PendingAttempt, endpoints map[int64]FinishEndpoint) FinishPlan {
	var p FinishPlan
	counted := make(map[int64][]AttemptResult)
	seen := make(map[DeliveryKey]bool, len(results))
	for _, r := range results {
		k := DeliveryKey{r.WebhookID, r.DeliveryID}
		row, ok := pending[k]
		if !ok || seen[k] {
			continue
		}
		seen[k] = true
		counted[r.WebhookID] = append(counted[r.WebhookID], r)
		if r.Status == DeliverySucceeded && row.Attempts == 0 && row.Fanned {
			p.Forget = append(p.Forget, k)
			continue
		}
		rec := AttemptRecord{Key: k, Status: r.Status, At: r.At, ResponseStatus: r.ResponseStatus, Error: r.Error}
		if r.Status == DeliveryPending {
			next := r.NextAttemptAt
			rec.NextAttemptAt = &next
		}
		p.Record = append(p.Record, rec)
	}
	for _, id := range slices.Sorted(maps.Keys(counted)) {
		e, ok := endpoints[id]
		if !ok {
			continue
		}
		run := RunAfter(e.FailingSince, e.Window, counted[id])
		p.Runs = append(p.Runs, EndpointRun{WebhookID: id, Window: run.Window, FailingSince: run.FailingSince})
		if run.Disable != nil && e.Enabled {
			p.Disables = append(p.Disables, Disabling{WebhookID: id, At: run.Disable.At, Events: e.Events,
				Reason: DisabledReason(*run.FailingSince, run.Disable.At, run.Disable.Error)})
		}
	}
	return p
}

// FailError is the last error of the deliveries the disabling fails.
func (d Disabling) FailError() string { return FailedByDisabling(d.Reason) }
