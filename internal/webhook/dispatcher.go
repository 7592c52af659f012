package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Queue is the part of petstore.WebhookStore the Dispatcher uses, with the same
// methods, so that every store is a Queue. Its doc comments there are the contract:
// a claim leases at most an endpoint's window of deliveries, serving endpoints in
// turn, and FinishAttempts counts the attempts and ends their leases.
type Queue interface {
	ClaimDeliveries(ctx context.Context, o petstore.ClaimOptions) ([]petstore.DeliveryJob, error)
	FinishAttempts(ctx context.Context, results []petstore.AttemptResult) error
	QueueStats(ctx context.Context) (petstore.QueueStats, error)
}

var _ Queue = petstore.WebhookStore(nil)

// DispatcherOptions configure a Dispatcher. Queue, Sender and Encode are required.
type DispatcherOptions struct {
	Queue  Queue
	Sender *Sender
	// Encode makes the body of a delivery: the event as JSON, as the API shows it.
	Encode func(petstore.Event) ([]byte, error)
	// Backoff spaces the retries of a delivery (zero: DefaultBackoff).
	Backoff Backoff
	// Now is the clock of the queue: claims, signatures, retry times (default
	// time.Now). Waiting (Poll, Grace, the Sender's timeout) is on the real clock.
	Now func() time.Time
	// Rand draws the jitter of the retries (nil: math/rand's). The Dispatcher holds a
	// lock around it, since attempts end concurrently.
	Rand *rand.Rand
	// Workers is how many attempts run at once, over every endpoint (default:
	// petstore.MaxWebhooks times Window, so that endpoints never wait for each
	// other's windows; an attempt mostly waits for its receiver, so many cost little).
	Workers int
	// Window is how many deliveries one endpoint is sent at once at most (default
	// petstore.DefaultDeliveryWindow, at most petstore.MaxDeliveryWindow); an
	// endpoint whose attempts fail is sent fewer (petstore.NextWindow).
	Window int

	// Lease is how long a claimed delivery stays this process's: a process that dies
	// mid-attempt delays the retry by at most this much. It must outlast an attempt,
	// the send and the recording of its result (default: the Sender's timeout plus
	// 30 s; one shorter than the timeout plus 5 s is raised to that, or every slow
	// receiver would be cut off, never counted, and tried forever). An attempt is cut
	// off when its lease runs out, so that no two processes deliver the same attempt
	// at once.
	Lease time.Duration
	// Poll is how often the queue is looked at when nothing says there is work: the
	// fallback for events written by other processes (default 1 s). In this process,
	// Nudge wakes the loop at once.
	Poll time.Duration
	// Grace is how long Run lets the attempts in flight end after its context is
	// done (default: the Sender's timeout plus 5 s). Those cut off are not recorded:
	// their leases run out and a later run tries them again.
	Grace time.Duration
	// DisableAfter disables an endpoint whose run of failed attempts lasted longer
	// (default 72 h; negative: never).
	DisableAfter time.Duration
	// Busy reports whether the service is serving requests (nil: never). While it is,
	// attempts begin at most BusyRate a second, so that deliveries, which cost about
	// what an order does, never take the processor from the sales that make them;
	// the backlog is sent at full speed once the requests pause.
	Busy func() bool
	// BusyRate is the pace of attempts while Busy (default DefaultBusyRate).
	BusyRate int
	Logger   *slog.Logger
}

// DefaultDisableAfter is how long an endpoint may fail before it is disabled.
const DefaultDisableAfter = 72 * time.Hour

// DefaultBusyRate is how many attempts a second begin while the service serves
// requests: enough for ten endpoints whose receivers answer in 50 ms, a fifth of a
// core or less on the machines measured (docs/ARCHITECTURE.md).
const DefaultBusyRate = 2000

// claimTimeout bounds a claim: one that hangs (a plan gone bad, a lock) is then an
// error in the log, not silence, and on PostgreSQL the cancelled connection is
// dropped, so that the next claim is planned afresh.
const claimTimeout = 10 * time.Second

// finishTimeout bounds the recording of an attempt's result, which goes on after
// Run's context is done so that a delivery made is not delivered again.
const finishTimeout = 10 * time.Second

// scrapeTimeout bounds the queue count a metrics scrape makes.
const scrapeTimeout = 5 * time.Second

// The outcomes of an attempt, the label values of petstore_webhook_deliveries_total.
const (
	outcomeSucceeded = "succeeded"
	outcomeRetried   = "retried"
	outcomeFailed    = "failed"
)

var (
	queueDepthDesc = prometheus.NewDesc("petstore_webhook_queue_depth",
		"Webhook deliveries pending (in flight or waiting for a retry) and events not yet sent to an enabled endpoint.", nil, nil)
	oldestPendingDesc = prometheus.NewDesc("petstore_webhook_oldest_pending_seconds",
		"Age of the event of the oldest pending webhook delivery; 0 when none is pending.", nil, nil)
)

// Dispatcher delivers the queue's pending deliveries: it claims those due, sends each
// signed with its endpoint's secrets, and records the outcome, a retry time drawn
// from Backoff, or the end of the retries. It delivers at least once: an attempt
// whose result was not recorded (a crash, a stop past the grace) is tried again once
// its lease runs out, and receivers drop repeats by the event id.
//
// A Dispatcher is a prometheus.Collector of its deliveries by outcome and of the
// queue's depth and age.
type Dispatcher struct {
	queue        Queue
	sender       *Sender
	encode       func(petstore.Event) ([]byte, error)
	backoff      Backoff
	now          func() time.Time
	workers      int
	window       int
	lease        time.Duration
	poll         time.Duration
	grace        time.Duration
	disableAfter time.Duration
	log          *slog.Logger

	randMu sync.Mutex
	rand   *rand.Rand

	wake    chan struct{}
	running atomic.Bool

	busy   func() bool
	paced  *rate.Limiter
	bodies *bodyCache

	deliveries *prometheus.CounterVec
	byOutcome  map[string]prometheus.Counter
}

// NewDispatcher returns a Dispatcher; it panics when Queue, Sender or Encode is
// missing, a mistake of the program rather than of its configuration.
func NewDispatcher(o DispatcherOptions) *Dispatcher {
	if o.Queue == nil || o.Sender == nil || o.Encode == nil {
		panic("webhook: NewDispatcher needs a Queue, a Sender and an Encode")
	}
	if o.Backoff == (Backoff{}) {
		o.Backoff = DefaultBackoff
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Window <= 0 {
		o.Window = petstore.DefaultDeliveryWindow
	}
	o.Window = min(o.Window, petstore.MaxDeliveryWindow)
	if o.Workers <= 0 {
		o.Workers = petstore.MaxWebhooks * o.Window
	}

	if o.Lease <= 0 {
		o.Lease = o.Sender.Timeout() + 30*time.Second
	}
	o.Lease = max(o.Lease, o.Sender.Timeout()+5*time.Second)
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Grace <= 0 {
		o.Grace = o.Sender.Timeout() + 5*time.Second
	}
	if o.DisableAfter == 0 {
		o.DisableAfter = DefaultDisableAfter
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.BusyRate <= 0 {
		o.BusyRate = DefaultBusyRate
	}
	d := &Dispatcher{
		queue: o.Queue, sender: o.Sender, encode: o.Encode, backoff: o.Backoff, now: o.Now,
		workers: o.Workers, window: o.Window, lease: o.Lease, poll: o.Poll, grace: o.Grace, disableAfter: o.DisableAfter,
		log: o.Logger, rand: o.Rand,
		wake:   make(chan struct{}, 1),
		busy:   o.Busy,
		paced:  rate.NewLimiter(rate.Limit(o.BusyRate), maxClaim),
		bodies: newBodyCache(),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "petstore_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome: succeeded (2xx), retried (failed, tried again later) or failed (failed, no more retries).",
		}, []string{"outcome"}),
	}
	// Every outcome is exported from the start, at 0, so that a rate over it is
	// defined before the first failure.
	d.byOutcome = map[string]prometheus.Counter{}
	for _, o := range []string{outcomeSucceeded, outcomeRetried, outcomeFailed} {
		d.byOutcome[o] = d.deliveries.WithLabelValues(o)
	}
	return d
}

// Nudge tells a running Dispatcher that deliveries may be due, such as after an
// event was written: it claims at once instead of at its next poll. It never blocks;
// nudges that come while one is waiting are one.
func (d *Dispatcher) Nudge() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// finished is an attempt made, waiting to be recorded.
type finished struct {
	job     petstore.DeliveryJob
	result  petstore.AttemptResult
	outcome string
}

// maxRecord bounds the results one transaction records, and maxClaim the deliveries
// one claim takes: a claim takes the writer on SQLite, so it stays short, and a full
// one is followed by another at once.
const (
	maxRecord = 512
	maxClaim  = 512
)

// Claims that are woken by nudges, and the recording of results, are spaced by
// idleSpacing, or busySpacing while the service serves requests: each is a write
// transaction, which on SQLite takes the one writer (and its fsync) from the orders'
// batches. An event is sent at most that much later for it.
const (
	idleSpacing = 0
	busySpacing = 20 * time.Millisecond
)

// spacing is the time between claims, and the time results gather before they are
// recorded.
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
	var (
		wg sync.WaitGroup
		// inFlight counts the deliveries claimed and not yet recorded: their leases
		// hold until then.
		inFlight atomic.Int64
		results  = make(chan finished, d.workers)
		recorded = make(chan struct{})
	)
	go func() {
		defer close(recorded)
		d.record(results, &inFlight)
	}()
	for ctx.Err() == nil {
		free := d.workers - int(inFlight.Load())
		if free > 0 && d.busy != nil && d.busy() {
			// Paced: as many as the tokens allow; with none, wait for one (without
			// claiming: a claim takes the writer on SQLite).
			tokens := d.paced.Tokens()
			if free = min(free, int(tokens)); free < 1 {
				if !sleep(ctx, time.Duration((1-tokens)/float64(d.paced.Limit())*float64(time.Second))+time.Millisecond) {
					break
				}
				continue
			}
		}
		if free > 0 {
			free = min(free, maxClaim)
			cctx, cancel := context.WithTimeout(ctx, claimTimeout)
			jobs, err := d.queue.ClaimDeliveries(cctx, petstore.ClaimOptions{Now: d.now(), Lease: d.lease, Max: free, Window: d.window})
			cancel()
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
			inFlight.Add(int64(len(jobs)))
			// Attempts made while idle are counted too, so that a busy spell starts
			// with what is left of the pace's burst.
			d.paced.AllowN(time.Now(), len(jobs))
			for _, job := range jobs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if f, ok := d.attempt(work, job); ok {
						results <- f
						return
					}
					inFlight.Add(-1)
					d.Nudge()
				}()
			}
			if len(jobs) >= free {
				// A full batch: more may be due.
				continue
			}
		}
		// Waiting for work, or for a worker (the recorder nudges when it frees some).
		t := time.NewTimer(d.poll)
		select {
		case <-ctx.Done():
		case <-d.wake:
		case <-t.C:
		}
		t.Stop()
		// Every commit of an event nudges: under a flood of orders, claims would take
		// the writer (SQLite) as often as the orders' batches do. They come at most
		// every d.spacing() instead; a full claim is followed at once (above).
		if wait := d.spacing(); wait > 0 && !sleep(ctx, wait) {
			break
		}
	}

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d.grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		n := inFlight.Load()
		d.log.Warn("webhook deliveries: attempts cut off at shutdown; they are tried again when their leases run out", "attempts", n, "lease", d.lease)
		cutOff()
		<-done
	}
	close(results)
	<-recorded
	return nil
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

// record writes the results of attempts until results is closed: it takes one, and
// every other one waiting or arriving within d.spacing() (up to maxRecord), records
// them in one transaction, and frees their workers.
func (d *Dispatcher) record(results <-chan finished, inFlight *atomic.Int64) {
	batch := make([]finished, 0, maxRecord)
	rs := make([]petstore.AttemptResult, 0, maxRecord)
	for f := range results {
		batch = append(batch[:0], f)
		// Idle, the results already waiting go together; busy, those that come
		// within the spacing too.
		gathering := time.NewTimer(d.spacing())
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
		err := d.queue.FinishAttempts(ctx, rs)
		cancel()
		if err != nil {
			d.log.Error("webhook deliveries: record attempts; they are tried again when their leases run out", "err", err, "attempts", len(batch))
		} else {
			for _, f := range batch {
				d.recorded(f)
			}
		}
		inFlight.Add(-int64(len(batch)))
		d.Nudge()
	}
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

// Describe sends the descriptors of the Dispatcher's metrics.
func (d *Dispatcher) Describe(ch chan<- *prometheus.Desc) {
	d.deliveries.Describe(ch)
	ch <- queueDepthDesc
	ch <- oldestPendingDesc
}

// Collect sends the deliveries by outcome and counts the queue, once per scrape. A
// queue that cannot be counted leaves the queue's gauges out of that scrape.
func (d *Dispatcher) Collect(ch chan<- prometheus.Metric) {
	d.deliveries.Collect(ch)
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	st, err := d.queue.QueueStats(ctx)
	if err != nil {
		d.log.Warn("webhook metrics: count the queue", "err", err)
		return
	}
	var age float64
	if !st.Oldest.IsZero() {
		age = max(d.now().Sub(st.Oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(st.Pending))
	ch <- prometheus.MustNewConstMetric(oldestPendingDesc, prometheus.GaugeValue, age)
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
