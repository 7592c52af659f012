package petstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"time"
)

// EventType names what happened. The list is open: a consumer must ignore a type it
// does not know.
type EventType string

// The event types. Each is written in the same transaction as the change it tells of.
const (
	// OrderPlaced: an order was placed; the event holds the order.
	OrderPlaced EventType = "order.placed"
	// OrderCompleted: an admin completed an order; the event holds the order.
	OrderCompleted EventType = "order.completed"
	// OrderCancelled: an order was cancelled; the event holds the order as it was.
	OrderCancelled EventType = "order.cancelled"
	// PetSoldOut: a pet's stock went from above 0 to 0 (an order took the last
	// units, or an admin set it to 0); the event holds the pet's inventory item.
	PetSoldOut EventType = "pet.sold_out"
	// PetRestocked: a pet's stock went from 0 to above 0 (a restock or a cancelled
	// order); the event holds the pet's inventory item.
	PetRestocked EventType = "pet.restocked"
	// PetStatusChanged: a pet's status changed, by an admin or by the store rules;
	// the event holds the pet.
	PetStatusChanged EventType = "pet.status_changed"
	// InventoryUpdated: a pet's stock changed, for whatever reason; the event holds
	// the pet's inventory item. One transaction that changes a pet's stock several
	// times (a batch of orders) makes one event with the stock after it.
	InventoryUpdated EventType = "inventory.updated"
	// WebhookTest: an admin asked for a test delivery to one endpoint; only that
	// endpoint gets it and the feed does not show it.
	WebhookTest EventType = "webhook.test"
)

// EventTypes lists the types an endpoint may subscribe to, in the order of their bits
// in a subscription mask. New types are appended, never inserted.
var EventTypes = []EventType{OrderPlaced, OrderCompleted, OrderCancelled, PetSoldOut, PetRestocked, PetStatusChanged, InventoryUpdated}

// AllEvents is the subscription to every type, those added later included.
const AllEvents EventType = "*"

// EventMask is a set of event types, one bit per entry of EventTypes. Stores keep
// an endpoint's subscription as its mask, so that choosing the endpoints of an event
// is one integer test in SQL on every database.
type EventMask int64

// MaskAll subscribes to every type, those added later included.
const MaskAll EventMask = 1<<62 - 1

// Bit is the mask of type t alone; 0 for a type no one subscribes to (WebhookTest).
func (t EventType) Bit() EventMask {
	for i, u := range EventTypes {
		if u == t {
			return 1 << i
		}
	}
	return 0
}

// MaskOf makes the mask of a subscription; "*" is every type. An unknown type, or
// "*" beside a type, is EValidationFailed on field: a subscription reads back as it
// was sent, so a client comparing the two never sees a difference it did not make.
func MaskOf(field string, types []EventType) (EventMask, error) {
	if len(types) == 0 {
		return 0, Invalid(field, "must name at least one event type")
	}
	if len(types) > 1 && slices.Contains(types, AllEvents) {
		return 0, Invalid(field, `must be ["*"] alone (every type) or a list of event types, not both`)
	}
	var m EventMask
	for _, t := range types {
		if t == AllEvents {
			m = MaskAll
			continue
		}
		b := t.Bit()
		if b == 0 {
			return 0, Invalid(field, "must hold event types, such as order.placed, or *")
		}
		m |= b
	}
	return m, nil
}

// Types lists the types of mask m, or just "*" for MaskAll.
func (m EventMask) Types() []EventType {
	if m == MaskAll {
		return []EventType{AllEvents}
	}
	var out []EventType
	for i, t := range EventTypes {
		if m&(1<<i) != 0 {
			out = append(out, t)
		}
	}
	return out
}

// Event is something that happened, with the resource it tells of as it was then:
// exactly one of Order, Pet and Inventory is set (Webhook for WebhookTest).
type Event struct {
	// ID is the event's stable identity ("evt_" and 26 characters): receivers dedupe
	// by it.
	ID        string
	Type      EventType
	CreatedAt time.Time
	// Seq orders the feed; the store gives it. Seqs rise along the feed but are not
	// consecutive (on PostgreSQL they are far apart).
	Seq int64

	Order     *Order
	Pet       *Pet
	Inventory *InventoryItem
	// Webhook is the endpoint a test event was sent to.
	Webhook *Webhook
}

// NewEventID makes a fresh event id: the time in milliseconds, then 80 random bits,
// so that ids never repeat, not even across databases a receiver has seen, and a store
// indexes them in the order they are made (appending to its index, not writing all
// over it). The alphabet is in ASCII order, so ids sort by time as text.
func NewEventID() string {
	return newEventID(time.Now())
}

const idAlphabet = "234567abcdefghijklmnopqrstuvwxyz"

func newEventID(now time.Time) string {
	var b [4 + 26]byte
	copy(b[:], "evt_")
	ms := uint64(now.UnixMilli())
	for i := 13; i >= 4; i-- { // 10 characters: 50 bits of milliseconds
		b[i] = idAlphabet[ms&31]
		ms >>= 5
	}
	var r [10]byte
	_, _ = rand.Read(r[:]) // never fails (crypto/rand)
	bits, n, j := uint64(0), 0, 14
	for _, c := range r {
		bits, n = bits<<8|uint64(c), n+8
		for n >= 5 {
			n -= 5
			b[j] = idAlphabet[bits>>n&31]
			j++
		}
	}
	return string(b[:])
}

// StockEvents lists the events of a pet's stock and status going from before to
// after, dated now: inventory.updated when the stock changed, pet.sold_out or
// pet.restocked when it crossed 0, pet.status_changed when the status changed. p is
// the pet (its name and category complete the status event's pet).
func StockEvents(p Pet, before, after PetState, now time.Time) []Event {
	var out []Event
	item := InventoryItem{PetID: p.ID, Quantity: after.Stock, Status: after.Status}
	add := func(t EventType) {
		e := Event{ID: NewEventID(), Type: t, CreatedAt: now}
		switch t {
		case PetStatusChanged:
			pet := p
			pet.Status, pet.Stock = after.Status, after.Stock
			e.Pet = &pet
		default:
			it := item
			e.Inventory = &it
		}
		out = append(out, e)
	}
	if before.Stock != after.Stock {
		add(InventoryUpdated)
		switch {
		case before.Stock > 0 && after.Stock == 0:
			add(PetSoldOut)
		case before.Stock == 0 && after.Stock > 0:
			add(PetRestocked)
		}
	}
	if before.Status != after.Status {
		add(PetStatusChanged)
	}
	return out
}

// Webhook is an endpoint that receives events.
type Webhook struct {
	ID          int64
	URL         string
	Description string
	Events      EventMask
	Enabled     bool
	// DisabledReason says why the service disabled the endpoint (it failed for too
	// long); empty when enabled, or when an admin disabled it.
	DisabledReason string
	// Secret signs deliveries. PreviousSecret, until PreviousSecretExpiresAt, signs
	// them too, so that a receiver can switch during a rotation.
	Secret                  string
	PreviousSecret          string
	PreviousSecretExpiresAt *time.Time
	// FailingSince is when the endpoint's current run of failed attempts began; nil
	// while its last attempt succeeded.
	FailingSince *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// CheckText applies the text policy to what w sets that before did not: its URL (an
// address) and its description (free text). An endpoint kept from before the policy
// keeps what it holds through changes that leave those alone, such as a rotation of
// its secret. A new endpoint's before is the zero Webhook. Whether deliveries may go
// to the URL is the caller's to check: it depends on how the service is run.
func (w Webhook) CheckText(before Webhook) error {
	if w.URL != before.URL {
		if err := CheckAddress("url", w.URL); err != nil {
			return err
		}
	}
	if w.Description != before.Description {
		return CheckDescription("description", w.Description)
	}
	return nil
}

// SetEnabled turns the endpoint on or off by hand. Enabled again, it forgets why the
// service disabled it and its run of failures: they are history, and a new run must
// begin before it is disabled again.
func (w Webhook) SetEnabled(on bool) Webhook {
	if on && !w.Enabled {
		w.DisabledReason, w.FailingSince = "", nil
	}
	w.Enabled = on
	return w
}

// Secrets lists the secrets that sign a delivery at now: the current one, and the
// previous one while its overlap lasts.
func (w Webhook) Secrets(now time.Time) []string {
	if w.PreviousSecret != "" && w.PreviousSecretExpiresAt != nil && now.Before(*w.PreviousSecretExpiresAt) {
		return []string{w.Secret, w.PreviousSecret}
	}
	return []string{w.Secret}
}

// DeliveryStatus is where a delivery stands.
type DeliveryStatus string

// The delivery statuses.
const (
	// DeliveryPending: not yet delivered; NextAttemptAt says when it is tried.
	DeliveryPending DeliveryStatus = "pending"
	// DeliverySucceeded: the endpoint answered 2xx.
	DeliverySucceeded DeliveryStatus = "succeeded"
	// DeliveryFailed: every attempt within the retry horizon failed, or the endpoint
	// was disabled or deleted; an admin may retry it by hand.
	DeliveryFailed DeliveryStatus = "failed"
)

// Delivery is the sending of one event to one endpoint, over one or more attempts.
type Delivery struct {
	// ID is the event's position in the log (its Seq): an endpoint is sent an event
	// once, so the pair (WebhookID, ID) names a delivery.
	ID        int64
	WebhookID int64
	EventID   string
	EventType EventType
	Status    DeliveryStatus
	// Attempts counts the attempts of the current run: since the delivery was made,
	// or since an admin last retried it (the back-off starts afresh then).
	Attempts int
	// NextAttemptAt is when the next attempt is due (pending only).
	NextAttemptAt *time.Time
	// LastAttemptAt is when the last attempt was made; nil before the first, and for
	// a delivery that succeeded at its first attempt, of which the store keeps no
	// record beyond the fact (see WebhookStore).
	LastAttemptAt *time.Time
	// ResponseStatus is the HTTP status of the last attempt; 0 when it got none, or
	// when the store kept no record of it.
	ResponseStatus int
	// LastError says why the last attempt failed, in words; empty after a success.
	LastError string
	CreatedAt time.Time
}

// MaxWebhooks is how many endpoints the service keeps. Every endpoint's deliveries
// cost the dispatcher a claim and the store a cursor; tens are what a shop needs.
const MaxWebhooks = 100

// MaxPendingTests is how many test deliveries an endpoint may have pending at once.
const MaxPendingTests = 10

// DefaultDeliveryWindow is how many deliveries one endpoint is sent at once at most,
// unless the operator says otherwise; MaxDeliveryWindow bounds what the operator may
// say. An endpoint's window shrinks when its attempts fail and grows back as they
// succeed (WebhookStore.FinishAttempts).
const (
	DefaultDeliveryWindow = 32
	MaxDeliveryWindow     = 256
)

// EventFilter selects events in the feed; a zero field does not filter.
type EventFilter struct {
	Type EventType
}

// DeliveryJob is a claimed attempt: the delivery, the event to send, and the endpoint
// it goes to.
type DeliveryJob struct {
	Delivery Delivery
	Event    Event
	Webhook  Webhook
	// RetrySince is when the delivery's run of attempts began: the At of its first
	// attempt (FinishAttempts records it), or, before that attempt, its claim or an
	// admin's retry. The retry horizon counts from the first attempt, so that a
	// delivery that waited to be sent keeps its whole horizon.
	RetrySince time.Time
}

// ClaimOptions say what ClaimDeliveries may take.
type ClaimOptions struct {
	// Now is the queue's clock: what is due, and when leases end.
	Now time.Time
	// Lease is how long the claimed deliveries stay the claimer's.
	Lease time.Duration
	// Max is how many deliveries the claim may take in all.
	Max int
	// Window bounds the deliveries of one endpoint in flight at once (across every
	// process); each endpoint's own window, which failures shrink, is at most this.
	Window int
}

// AttemptResult is the outcome of one attempt, which the dispatcher reports.
type AttemptResult struct {
	WebhookID  int64
	DeliveryID int64
	At         time.Time
	// Status is the delivery's new status: pending (NextAttemptAt is then the retry),
	// succeeded or failed.
	Status         DeliveryStatus
	NextAttemptAt  time.Time
	ResponseStatus int
	Error          string
	// DisableIfFailingBefore disables the endpoint, with a reason, when this attempt
	// failed and the endpoint's run of failures began before it (zero: never).
	DisableIfFailingBefore time.Time
}

// QueueStats describes the undelivered work, for metrics.
type QueueStats struct {
	// Pending counts pending deliveries.
	Pending int64
	// Oldest is when the oldest pending delivery's event happened; zero when none.
	Oldest time.Time
}

// WebhookStore keeps webhook endpoints, the event feed and deliveries.
//
// Events are written once, by the other stores' changes, in their transactions; an
// event exists exactly when its change does. Nothing is written per endpoint then:
// each endpoint keeps its place in the feed (a cursor), and ClaimDeliveries fans the
// events after it out to the endpoint, outside any sale. A delivery has a row only
// while it is in flight, pending a retry, failed, or once it took more than one
// attempt (and for test events); one that succeeded at its first attempt leaves no
// row, and is known from the endpoint's spans: the ranges of the feed it was sent,
// each with the subscription it had then. Deliveries lists both kinds alike.
//
// A change writes its events in this order: the order's event (placed, completed,
// cancelled), then the pet's StockEvents. A batch of orders writes an order.placed
// per placed order and the StockEvents of each pet whose state it changed, from the
// state before the batch to the state after it; their order within the batch is not
// fixed.
//
// Every method that takes an endpoint's id answers ENotFound for an unknown one.
type WebhookStore interface {
	// CreateWebhook adds an endpoint (enabled), sent the events that happen from now
	// on; w.ID and the dates are set by the store. Text the policy refuses
	// (Webhook.CheckText) is EValidationFailed; the MaxWebhooks+1st is EConflict.
	CreateWebhook(ctx context.Context, w Webhook) (Webhook, error)
	Webhook(ctx context.Context, id int64) (Webhook, error)
	Webhooks(ctx context.Context, p Page) ([]Webhook, error)
	// UpdateWebhook changes an endpoint to what change returns, in one transaction,
	// and sets UpdatedAt; an error from change is returned and nothing changes, and
	// so is a URL or description the text policy refuses (Webhook.CheckText).
	// Disabling it fails its pending deliveries and the events not yet sent to it;
	// enabling a disabled one clears DisabledReason and FailingSince (its run of
	// failures starts afresh) and sends it the events that happen from then on. A
	// new subscription applies to the events not yet sent.
	UpdateWebhook(ctx context.Context, id int64, change func(Webhook) (Webhook, error)) (Webhook, error)
	// DeleteWebhook removes an endpoint and its deliveries.
	DeleteWebhook(ctx context.Context, id int64) error
	// SendTestEvent writes a WebhookTest event and its one delivery, to endpoint id,
	// due at once. An endpoint with MaxPendingTests test deliveries pending is
	// EConflict.
	SendTestEvent(ctx context.Context, id int64, now time.Time) (Delivery, error)

	// Deliveries lists a page of an endpoint's deliveries by id (the event's place
	// in the feed), oldest first: those it was sent and those it is being sent. Events
	// not yet fanned out to it are not listed.
	Deliveries(ctx context.Context, webhookID int64, p Page) ([]Delivery, error)
	// RetryDelivery makes a delivery of the endpoint pending again, due at now, with a
	// fresh retry horizon; one pending already is left as it is. A delivery of another
	// endpoint is ENotFound.
	RetryDelivery(ctx context.Context, webhookID, deliveryID int64, now time.Time) (Delivery, error)

	// Events lists a page of the feed by Seq (Page.After is a Seq), oldest first. On
	// PostgreSQL it shows an event only once every event before it is committed, so
	// a reader that follows the cursor misses none.
	Events(ctx context.Context, f EventFilter, p Page) ([]Event, error)
	// Event finds one event of the feed by its id; a WebhookTest event is not in the
	// feed (ENotFound).
	Event(ctx context.Context, id string) (Event, error)
	// PurgeEvents deletes events that happened before the given time, with their
	// deliveries.
	PurgeEvents(ctx context.Context, before time.Time) (int64, error)

	// ClaimDeliveries leases up to o.Max deliveries due at o.Now, for o.Lease: first
	// each endpoint's retries that are due, then the events after its cursor that it
	// subscribes to (the cursor moves past them). An endpoint is given at most its
	// window less what it has in flight, and endpoints are served in turn, so that
	// none waits for another. No order holds between an endpoint's deliveries. A lease
	// that runs out (a process killed mid-delivery) makes the delivery claimable
	// again. Concurrent claims, from any process, never share a delivery.
	ClaimDeliveries(ctx context.Context, o ClaimOptions) ([]DeliveryJob, error)
	// FinishAttempts records the results of attempts, in one transaction (Attempts
	// counts each) and ends their leases; the first attempt of a run (Attempts 0)
	// sets RetrySince to its At. A success at a fan-out's first attempt removes the
	// delivery's row (its span remembers it). On the endpoint a success clears
	// FailingSince and widens its window by one; a failure sets FailingSince at the
	// first failure of a run, halves the window and, past DisableIfFailingBefore,
	// disables the endpoint with a reason and fails its pending deliveries, this one
	// included. A result whose delivery is gone (its endpoint was deleted) or no
	// longer pending (its endpoint was disabled) is left out.
	FinishAttempts(ctx context.Context, results []AttemptResult) error
	// QueueStats counts the deliveries waiting: pending ones and events not yet
	// fanned out.
	QueueStats(ctx context.Context) (QueueStats, error)
}

// The words the stores write when an endpoint is disabled, on the endpoint and on the
// deliveries it fails, worded once for both stores (the document quotes them).

// DisabledByAdmin is the last error of a delivery failed because an admin disabled its
// endpoint.
const DisabledByAdmin = "The endpoint was disabled."

// DisabledReason says why the service disabled an endpoint whose attempts all failed
// from since to at, the last one with lastError.
func DisabledReason(since, at time.Time, lastError string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Every delivery attempt failed from %s to %s", since.UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339))
	if lastError != "" {
		fmt.Fprintf(&b, "; the last one: %s", strings.TrimSuffix(lastError, "."))
	}
	b.WriteString(". Fix the receiver, then enable the endpoint and retry its failed deliveries.")
	return b.String()
}

// FailedByDisabling is the last error of a delivery failed because the service
// disabled its endpoint for the reason why.
func FailedByDisabling(why string) string { return "The endpoint was disabled: " + why }

// Span is a range of the feed, (From, To] by Seq, that an endpoint was sent with
// subscription Events, or, when Failed, that it was not sent because it was disabled
// (Error says why). A delivery in a span has a row only when its first attempt did
// not simply succeed; the span tells the others.
type Span struct {
	From, To int64
	Events   EventMask
	Failed   bool
	Error    string
}

// Holds reports whether the event at seq, of type t, was the endpoint's in span s.
func (s Span) Holds(seq int64, t EventType) bool {
	return seq > s.From && seq <= s.To && s.Events&t.Bit() != 0
}

// SpanDelivery is the delivery of event e (Seq, ID, Type and CreatedAt) to endpoint
// webhookID that span s tells of, the event having no row: sent and succeeded at its
// first attempt, or failed with the span's error.
func SpanDelivery(webhookID int64, e Event, s Span) Delivery {
	d := Delivery{ID: e.Seq, WebhookID: webhookID, EventID: e.ID, EventType: e.Type, CreatedAt: e.CreatedAt,
		Status: DeliverySucceeded, Attempts: 1}
	if s.Failed {
		d.Status, d.Attempts, d.LastError = DeliveryFailed, 0, s.Error
	}
	return d
}

// NextWindow is an endpoint's window of deliveries in flight after an attempt: one
// wider after a success (up to MaxDeliveryWindow), half as wide after a failure (at
// least 1), so that a receiver that times out is sent one delivery at a time and one
// that keeps up is sent many.
func NextWindow(w int, ok bool) int {
	if ok {
		return min(w+1, MaxDeliveryWindow)
	}
	return max(w/2, 1)
}

// MergeDeliveries merges two lists of one endpoint's deliveries, each by id, into
// the first n by id.
func MergeDeliveries(a, b []Delivery, n int) []Delivery {
	out := make([]Delivery, 0, min(len(a)+len(b), n))
	for len(out) < n && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || (len(a) > 0 && a[0].ID < b[0].ID) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// ByWebhook groups attempt results by endpoint, each group in the order given.
func ByWebhook(results []AttemptResult) map[int64][]AttemptResult {
	m := make(map[int64][]AttemptResult)
	for _, r := range results {
		m[r.WebhookID] = append(m[r.WebhookID], r)
	}
	return m
}

// Run is an endpoint's state after a batch of attempt results.
type Run struct {
	// Window is the endpoint's window of deliveries in flight (NextWindow).
	Window int
	// FailingSince starts the endpoint's run of failures; nil when its last attempt
	// succeeded.
	FailingSince *time.Time
	// Disable is the result that disables the endpoint (its run of failures began
	// before the result's DisableIfFailingBefore); nil when none does.
	Disable *AttemptResult
}

// RunAfter applies an endpoint's results, in the order they were attempted, to its
// run of failures since and its window.
func RunAfter(since *time.Time, window int, results []AttemptResult) Run {
	rs := slices.Clone(results)
	slices.SortStableFunc(rs, func(a, b AttemptResult) int { return a.At.Compare(b.At) })
	run := Run{Window: window, FailingSince: since}
	for i := range rs {
		r := &rs[i]
		ok := r.Status == DeliverySucceeded
		run.Window = NextWindow(run.Window, ok)
		if ok {
			// A later success in the same batch shows the receiver works.
			run.FailingSince, run.Disable = nil, nil
			continue
		}
		if run.FailingSince == nil {
			at := r.At
			run.FailingSince = &at
		}
		if run.Disable == nil && !r.DisableIfFailingBefore.IsZero() && run.FailingSince.Before(r.DisableIfFailingBefore) {
			run.Disable = r
		}
	}
	return run
}
