package webhook

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/tracing"
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

// DefaultWorkers is how many attempts run at once by default, over every endpoint.
// An attempt mostly waits for its receiver, so it costs little CPU, but it holds a
// goroutine and a connection (its buffers and net/http's two goroutines): with one
// per place in every window (100 endpoints × 64) a backlog to 100 endpoints sent
// thousands at once and the server's memory passed 140 MiB. A worker is busy only
// until its receiver answers (maxUnrecorded), so 192 carry the pace (2,000 deliveries
// a second) to ten receivers that answer in 50 ms on both stores; 160 fell to 1,850 on
// PostgreSQL, whose claims take longer, and 128 to 1,830 on SQLite. With those ten
// receivers the server's peak memory was 101–105 MiB with 256 workers and 94–99 with
// 192 (docs/PERFORMANCE.md, 2026-11-28, third day). Endpoints that answer slower share
// them.
const DefaultWorkers = 192

// DefaultLease is how long a process holds a delivery it attempts unless told
// otherwise: the sender's default timeout (10 s), the recording of the result, and a
// margin. A process killed mid-attempt delays that delivery's retry by this much, on
// any process.
const DefaultLease = 25 * time.Second

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
	// Workers is how many attempts run at once, over every endpoint (default
	// DefaultWorkers).
	Workers int
	// Window is how many deliveries one endpoint is sent at once at most (default
	// petstore.DefaultDeliveryWindow, at most petstore.MaxDeliveryWindow); an
	// endpoint whose attempts fail is sent fewer (petstore.NextWindow).
	Window int

	// Lease is how long a claimed delivery stays this process's: a process that dies
	// mid-attempt delays the retry by at most this much. It must outlast an attempt,
	// the send and the recording of its result (default DefaultLease; one shorter
	// than the Sender's timeout plus 5 s is raised to that, or every slow receiver
	// would be cut off, never counted, and tried forever). An attempt is cut
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
	// Tracer, when set, makes each attempt a span ("webhook.attempt") in the trace of
	// the event's request (Event.TraceParent), else a trace of its own; nil for none.
	// Either way a delivery carries a traceparent when one is known (Sender.Send).
	Tracer trace.TracerProvider
}

// DefaultDisableAfter is how long an endpoint may fail before it is disabled.
const DefaultDisableAfter = 72 * time.Hour

// DefaultBusyRate is how many attempts a second begin while the service serves
// requests: enough for ten endpoints whose receivers answer in 50 ms, a fifth of a
// core or less on the machines measured (docs/ARCHITECTURE.md).
const DefaultBusyRate = 2000

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
	// tracer makes the attempts' spans; nil when tracing is off.
	tracer trace.Tracer

	randMu sync.Mutex
	rand   *rand.Rand

	wake    chan struct{}
	running atomic.Bool

	busy  func() bool
	paced *rate.Limiter
	// gather is busyGather; tests stretch it.
	gather time.Duration
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
		o.Workers = DefaultWorkers
	}

	if o.Lease <= 0 {
		o.Lease = DefaultLease
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
		gather: busyGather,
		bodies: newBodyCache(),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "petstore_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome: succeeded (2xx), retried (failed, tried again later) or failed (failed, no more retries).",
		}, []string{"outcome"}),
	}
	if o.Tracer != nil {
		d.tracer = o.Tracer.Tracer(tracing.Name)
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
