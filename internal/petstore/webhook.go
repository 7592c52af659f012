package petstore

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

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

// Created is w as the store adds it at now: enabled, with no run of failures.
func (w Webhook) Created(now time.Time) Webhook {
	w.Enabled, w.DisabledReason, w.FailingSince = true, "", nil
	w.CreatedAt, w.UpdatedAt = now, now
	return w
}

// SpanChange is what a change of an endpoint does to its spans and its cursor.
type SpanChange int

// The span changes of Webhook.Changed.
const (
	// SpanKept: the current span goes on.
	SpanKept SpanChange = iota
	// SpanRestarted: enabled again, the endpoint starts a span at the feed's end
	// (events written while it was disabled are not its) with the default window.
	SpanRestarted
	// SpanFailed: disabled, its pending deliveries and the events after its cursor
	// fail (DisabledByAdmin), kept as a failed span up to the feed's end.
	SpanFailed
	// SpanClosed: a new subscription closes the span sent with the old one.
	SpanClosed
)

// Changed is w, which a change made of cur, as the store saves it at now, and what
// the change does to its spans. The id and creation date stay; enabled again (by
// whatever change, as SetEnabled does), it forgets why it was disabled and its run
// of failures; an enabled endpoint has no reason to be disabled.
func (w Webhook) Changed(cur Webhook, now time.Time) (Webhook, SpanChange) {
	w.ID, w.CreatedAt, w.UpdatedAt = cur.ID, cur.CreatedAt, now
	if w.Enabled {
		was := w
		was.Enabled = cur.Enabled
		w = was.SetEnabled(true)
		w.DisabledReason = ""
	}
	switch {
	case w.Enabled && !cur.Enabled:
		return w, SpanRestarted
	case !w.Enabled && cur.Enabled:
		return w, SpanFailed
	case w.Enabled && w.Events != cur.Events:
		return w, SpanClosed
	}
	return w, SpanKept
}

// PendingTypes reads the types of an endpoint's pending deliveries: those its URL
// will be sent, whatever it subscribes to now (retries of events sent under an older
// subscription). UpdateWebhook gives its change one, which reads them in the
// change's transaction, and only when called.
type PendingTypes func() ([]EventType, error)

// CheckStream decides whether p may save endpoint w, made from before (the zero
// Webhook when w is new): a key may point an endpoint's deliveries only at data it
// may read itself. A new endpoint, a new subscription or a new URL needs the scope of
// every type w subscribes to; "*" (AllEvents) also takes the types added later, whose
// scopes a limited key does not hold (it is given none later), so it needs a key with
// every scope of its role. A new URL also needs the scopes of the deliveries the
// endpoint still has to send (pending), which would go to it.
//
// An endpoint left disabled has none pending (disabling fails them, and a retry waits
// for it to be enabled), but for tests, whose data is the endpoint itself. A new
// description, secret or enabled sends nothing to a new place and needs none. A key
// with every scope of its role passes without reading pending.
func (p Principal) CheckStream(before, w Webhook, pending PendingTypes) error {
	if p.Scopes == nil || w.Events == before.Events && w.URL == before.URL {
		return nil
	}
	if t, scope := p.MissingEventScope(w.Events); scope != "" {
		return LacksEventScope(scope, t)
	}
	if w.Events == MaskAll {
		return AllEventsNeedEveryScope()
	}
	if before.ID == 0 || w.URL == before.URL || !w.Enabled {
		return nil
	}
	types, err := pending()
	if err != nil {
		return err
	}
	for _, t := range types {
		if !p.MayReadEvents(t) {
			return PendingUnreadable(t.Scope(), t)
		}
	}
	return nil
}

// AnsweredError is a delivery's LastError for an attempt the endpoint answered with
// status, quoting the start of its answer (quote; "" for none), worded once here so
// that WithoutAnswer finds the quote again.
func AnsweredError(status int, quote string) string {
	msg := fmt.Sprintf("the endpoint answered %d", status)
	if quote != "" {
		msg += ": " + quote
	}
	return msg
}

// WithoutAnswer is d without the receiver's answer quoted in its LastError
// (AnsweredError): a receiver may echo the event it was sent, and the endpoint's
// deliveries are listed to keys that may not read every type (CheckStream).
func (d Delivery) WithoutAnswer() Delivery {
	if prefix := AnsweredError(d.ResponseStatus, "") + ": "; strings.HasPrefix(d.LastError, prefix) {
		d.LastError = strings.TrimSuffix(prefix, ": ")
	}
	return d
}

// CheckResend decides whether p may have delivery d sent again: the attempt sends
// the event's data to the endpoint, so it needs the scope of the event's type.
func (p Principal) CheckResend(d Delivery) error {
	if p.MayReadEvents(d.EventType) {
		return nil
	}
	return LacksEventScope(d.EventType.Scope(), d.EventType)
}

// CheckRetry decides whether a retry by hand makes delivery d, of an endpoint
// enabled or not, pending again: may decides first whether the caller may have it
// sent again (its error is returned); a pending one is left as it is (false, nil);
// one of a disabled endpoint is EConflict, as it would wait for the endpoint forever.
func CheckRetry(d Delivery, enabled bool, may func(Delivery) error) (bool, error) {
	if err := may(d); err != nil || d.Status == DeliveryPending {
		return false, err
	}
	if !enabled {
		return false, WebhookDisabled(d.WebhookID)
	}
	return true, nil
}

// SecretOverlap is how long a rotated secret keeps signing deliveries beside the new
// one unless the rotation asks otherwise, so that a receiver can switch to the new
// secret at a time of its choosing.
const SecretOverlap = 24 * time.Hour

// RotateSecret makes secret the one that signs w's deliveries at now; the replaced
// one keeps signing beside it for overlap (to the second). One overlap at a time: a
// rotation within the overlap of the one before drops the oldest secret, which keeps a
// delivery's signature header at two signatures at most. An overlap of 0 keeps none,
// which revokes a leaked secret at once.
func (w Webhook) RotateSecret(secret string, now time.Time, overlap time.Duration) Webhook {
	w.PreviousSecret, w.PreviousSecretExpiresAt = "", nil
	if overlap > 0 {
		expires := now.UTC().Truncate(time.Second).Add(overlap)
		w.PreviousSecret, w.PreviousSecretExpiresAt = w.Secret, &expires
	}
	w.Secret = secret
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

// CheckWebhookCount applies MaxWebhooks to a store that keeps n endpoints and
// adds one.
func CheckWebhookCount(n int) error {
	if n >= MaxWebhooks {
		return TooManyWebhooks()
	}
	return nil
}

// MaxPendingTests is how many test deliveries an endpoint may have pending at once.
const MaxPendingTests = 10

// CheckPendingTests applies MaxPendingTests to endpoint id, which has pending test
// deliveries pending, and is sent one more.
func CheckPendingTests(id int64, pending int) error {
	if pending >= MaxPendingTests {
		return TooManyTests(id)
	}
	return nil
}

// DefaultDeliveryWindow is how many deliveries one endpoint is sent at once at most,
// unless the operator says otherwise; MaxDeliveryWindow bounds what the operator may
// say. An endpoint's window shrinks when its attempts fail and grows back as they
// succeed (WebhookStore.FinishAttempts).
const (
	DefaultDeliveryWindow = 64
	MaxDeliveryWindow     = 256
)

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
	// Answered counts, by endpoint, the claimer's leased deliveries whose attempts
	// have ended and whose results are not recorded yet: they keep their leases until
	// recorded (a crash before that sends them again) but no longer take a place in
	// their endpoint's window, which bounds the requests a receiver is sent at once.
	// The claimer must not record results while it claims, or a result counted here
	// and recorded before the claim reads the leases would free its place twice.
	Answered map[int64]int
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
// webhookID that the span of spans holding it tells of, the event having no row: sent
// and succeeded at its first attempt, or failed with the span's error. It reports
// false when no span holds e.
func SpanDelivery(webhookID int64, e Event, spans []Span) (Delivery, bool) {
	for _, s := range spans {
		if !s.Holds(e.Seq, e.Type) {
			continue
		}
		d := Delivery{ID: e.Seq, WebhookID: webhookID, EventID: e.ID, EventType: e.Type, CreatedAt: e.CreatedAt,
			Status: DeliverySucceeded, Attempts: 1}
		if s.Failed {
			d.Status, d.Attempts, d.LastError = DeliveryFailed, 0, s.Error
		}
		return d, true
	}
	return Delivery{}, false
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
