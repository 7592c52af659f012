package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/tracing"
)

// One attempt: the send, its outcome and the words the API shows for a failure.

// attempt makes one claimed attempt and returns its result to record; false when it
// was cut off (a shutdown past its grace, or its lease ran out), which records
// nothing. ctx ends at the grace after a shutdown; the attempt also ends with its
// lease.
func (d *Dispatcher) attempt(ctx context.Context, job petstore.DeliveryJob) (finished, bool) {
	ctx, cancel := context.WithTimeout(ctx, d.lease)
	defer cancel()

	sentAt := d.now()
	var (
		res         Result
		receiverErr = true // false when the failure is ours, not the endpoint's
	)
	// The attempt goes on in the trace of the request that made the event (the
	// sender passes it on as traceparent), in a span of its own when tracing is on.
	ctx = tracing.WithTraceParent(ctx, job.Event.TraceParent)
	if d.tracer != nil {
		var span trace.Span
		ctx, span = d.startAttempt(ctx, job)
		defer func() { endAttempt(span, res) }()
	}
	body, err := d.bodies.get(job.Event, d.encode)
	if err != nil {
		d.log.Error("webhook delivery: encode the event", "err", err, "delivery", job.Delivery.ID, "webhook", job.Webhook.ID, "event", job.Event.ID)
		res.Err = errEncode
		receiverErr = false
	} else {
		secrets := job.Webhook.Secrets(sentAt)
		keys := make([][]byte, len(secrets))
		for i, s := range secrets {
			keys[i] = []byte(s)
		}
		res = d.sender.Send(ctx, job.Webhook.URL, job.Event.ID, body, sentAt, keys...)
	}
	if !res.OK() && ctx.Err() != nil {
		// Cut off by a shutdown past its grace, or by the lease: no fault of the
		// endpoint's, so no attempt is counted. The lease runs out (if it has not)
		// and the delivery is tried again.
		d.log.Warn("webhook delivery: attempt cut off, not recorded", "err", res.Err, "delivery", job.Delivery.ID, "webhook", job.Webhook.ID, "event", job.Event.ID)
		return finished{}, false
	}

	at := d.now()
	r := petstore.AttemptResult{WebhookID: job.Webhook.ID, DeliveryID: job.Delivery.ID, At: at, ResponseStatus: res.Status}
	outcome := outcomeSucceeded
	if res.OK() {
		r.Status = petstore.DeliverySucceeded
	} else {
		r.Error = d.describe(res)
		// What the API does not say, the operator's log does: all but the URL, whose
		// query may hold the receiver's token.
		var attrs []any
		if res.Addr.IsValid() {
			attrs = append(attrs, "addr", res.Addr)
		}
		if res.Err != nil {
			attrs = append(attrs, "err", withoutURL(res.Err))
		} else {
			attrs = append(attrs, "status", res.Status, "answer", quote(res.Answer))
		}
		d.log.Info("webhook delivery attempt failed", append([]any{"delivery", job.Delivery.ID, "webhook", job.Webhook.ID, "event", job.Event.ID}, attrs...)...)
		// Delivery.Attempts counts the attempts recorded before this one (the store
		// counts an attempt in FinishAttempts), which is Backoff's attempt number:
		// 0 for the first.
		// The horizon counts from the run's first attempt, which the store records as
		// the run's start (FinishAttempts): a delivery that waited keeps its whole
		// horizon.
		first := job.RetrySince
		if job.Delivery.Attempts == 0 {
			first = at
		}
		next, ok := d.nextAttempt(first, at, job.Delivery.Attempts)
		if ok {
			r.Status, r.NextAttemptAt, outcome = petstore.DeliveryPending, next, outcomeRetried
		} else {
			r.Status, outcome = petstore.DeliveryFailed, outcomeFailed
			r.Error += fmt.Sprintf("; no more retries: the next would fall past the %s retry horizon", formatDuration(d.backoff.Horizon))
		}
		if receiverErr && d.disableAfter > 0 {
			r.DisableIfFailingBefore = at.Add(-d.disableAfter)
		}
	}
	return finished{job: job, result: r, outcome: outcome}, true
}

// startAttempt starts the span of an attempt at job.
func (d *Dispatcher) startAttempt(ctx context.Context, job petstore.DeliveryJob) (context.Context, trace.Span) {
	ctx, span := d.tracer.Start(ctx, "webhook.attempt", trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		// The endpoint's host, not its URL, whose query may hold the receiver's token.
		var host string
		if u, err := url.Parse(job.Webhook.URL); err == nil {
			host = u.Hostname()
		}
		span.SetAttributes(
			attribute.Int64("petstore.webhook.id", job.Webhook.ID),
			attribute.String("petstore.event.id", job.Event.ID),
			attribute.String("petstore.event.type", string(job.Event.Type)),
			attribute.Int("petstore.delivery.attempt", job.Delivery.Attempts+1),
			attribute.String("http.request.method", "POST"),
			attribute.String("server.address", host),
		)
	}
	return ctx, span
}

// endAttempt ends an attempt's span with its result.
func endAttempt(span trace.Span, res Result) {
	if span.IsRecording() {
		if res.Status != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", res.Status))
		}
		if !res.OK() {
			msg := "the endpoint answered " + strconv.Itoa(res.Status)
			if res.Err != nil {
				msg = withoutURL(res.Err).Error()
			}
			span.SetStatus(codes.Error, msg)
		}
	}
	span.End()
}

func (d *Dispatcher) nextAttempt(first, now time.Time, attempt int) (time.Time, bool) {
	if d.rand == nil {
		return d.backoff.Next(first, now, attempt, nil)
	}
	d.randMu.Lock()
	defer d.randMu.Unlock()
	return d.backoff.Next(first, now, attempt, d.rand)
}

var errEncode = errors.New("the event could not be encoded (see the service's log)")

// maxQuote is how much of a receiver's answer an attempt's error quotes.
const maxQuote = 120

// The reasons an attempt's lastError gives when there was no answer. They are few
// and fixed on purpose: the API must not be an oracle of the operator's network
// (which addresses exist, which names resolve, what a private service answers), so
// the details go to the service's log and the API says only which of these it was.
const (
	reasonUnreachable = "the endpoint could not be reached"
	reasonTLS         = "the endpoint's TLS certificate was not accepted"
)

// describe says in a few words why an attempt failed, for Delivery.LastError, which
// the admin API shows: the status, a refused address, an unreachable endpoint or a
// time-out. A receiver's answer is quoted, and a TLS failure told apart, only when
// the attempt reached a public address.
func (d *Dispatcher) describe(res Result) string {
	err := res.Err
	switch {
	case err == nil && res.Status >= 300 && res.Status < 400:
		return fmt.Sprintf("the endpoint answered %d, a redirect, which is not followed", res.Status)
	case err == nil && res.Public:
		return petstore.AnsweredError(res.Status, quote(res.Answer))
	case err == nil:
		return petstore.AnsweredError(res.Status, "")
	case errors.Is(err, errEncode):
		return err.Error()
	case errors.Is(err, ErrRefusedURL):
		// Found in the URL's own text, which the admin wrote: no oracle, and the
		// operator learns what to change.
		return "refused: " + strings.TrimPrefix(err.Error(), ErrRefusedURL.Error()+": ")
	case errors.Is(err, ErrPrivateAddress), errors.Is(err, ErrOwnAddress):
		// Found at the dial, after DNS: "refused" here beside "could not be reached"
		// for a name that does not exist would tell which internal names exist.
		return reasonUnreachable
	}
	var (
		netErr  net.Error
		certErr *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "no answer within " + formatDuration(d.sender.Timeout())
	case res.Public && (errors.As(err, &certErr) || errors.As(err, &unknown) || errors.As(err, &host)):
		return reasonTLS
	}
	return reasonUnreachable
}

// withoutURL drops the *url.Error around an error: its text holds the endpoint's URL.
func withoutURL(err error) error {
	var u *url.Error
	if errors.As(err, &u) {
		return u.Err
	}
	return err
}

// quote returns the start of a receiver's answer as one printable line, or "" when it
// is empty or not text.
func quote(answer []byte) string {
	if !utf8.Valid(answer) {
		// The kept part may end inside a rune; a body that is not text at all is
		// not quoted.
		for i := 1; i < utf8.UTFMax && len(answer) > i; i++ {
			if utf8.Valid(answer[:len(answer)-i]) {
				answer = answer[:len(answer)-i]
				break
			}
		}
		if !utf8.Valid(answer) {
			return ""
		}
	}
	s := strings.Join(strings.FieldsFunc(string(answer), unicode.IsSpace), " ")
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, s)
	if utf8.RuneCountInString(s) > maxQuote {
		s = string([]rune(s)[:maxQuote]) + "…"
	}
	return s
}

// formatDuration writes d as people do: "10s", "500ms", "72h", not "72h0m0s".
func formatDuration(d time.Duration) string {
	switch {
	case d != 0 && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d != 0 && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// bodyCache keeps the bodies of the latest events: an event goes to every endpoint
// subscribed to it, and is encoded once. Events never change, so a body is good for
// as long as it is kept.
type bodyCache struct {
	mu   sync.Mutex
	m    map[string][]byte
	ring [bodyCacheSize]string
	next int
}

// bodyCacheSize bounds the bodies kept: those of the events in flight at once.
const bodyCacheSize = 4096

func newBodyCache() *bodyCache { return &bodyCache{m: make(map[string][]byte, bodyCacheSize)} }

// get returns the body of e, encoding it with encode the first time; the oldest body
// kept makes room (an array used as a ring: O(1) per event).
func (c *bodyCache) get(e petstore.Event, encode func(petstore.Event) ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	b, ok := c.m[e.ID]
	c.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := encode(e)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[e.ID]; !ok {
		delete(c.m, c.ring[c.next])
		c.ring[c.next] = e.ID
		c.next = (c.next + 1) % bodyCacheSize
		c.m[e.ID] = b
	}
	return b, nil
}
